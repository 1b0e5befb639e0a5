/* cleanup_lang.c - the clean-up of a translation for its target language,
 * as the table of language rules (util/lang_rules.h) says.
 *
 * A CJK target gets the Chinese clean-up in the row's style (cleanup_zh.c);
 * a language with spaces between words gets the word passes (cleanup.c)
 * with the row's flags, then the punctuation of the language: its quotation
 * marks for a pair of straight quotes, French spacing, Spanish opening
 * marks, Arabic punctuation, a final danda. The default row's clean-up only
 * removes decoder loops and doubled white space, so a language we know
 * nothing about keeps its punctuation as the engine wrote it.
 *
 * Each pass reads the text as code points; URLs, e-mail addresses, `code`
 * and the join's span markers (0xFF + 3 continuation bytes, decoded here as
 * U+FFFD bytes) are protected: nothing in them or touching them is
 * rewritten.
 */
#include "text/text_internal.h"
#include "util/lang.h"

#include <stdlib.h>
#include <string.h>

#define NNBSP 0x202F /* narrow no-break space */

typedef struct cp_text {
    uint32_t *cp; /* code points; an invalid byte is U+FFFD with raw set */
    unsigned char *raw, *prot;
    size_t n;
} cp_text;

static void cp_text_free(cp_text *t)
{
    free(t->cp);
    free(t->raw);
    free(t->prot);
}

/* Decodes s[0..len) into t, marking protected code points. */
static int decode(const char *s, size_t len, cp_text *t)
{
    fy_spans sp = {0};
    memset(t, 0, sizeof *t);
    t->cp = malloc((len + 1) * sizeof *t->cp);
    t->raw = malloc(len + 1);
    t->prot = calloc(len + 1, 1);
    if (!t->cp || !t->raw || !t->prot || fy_find_spans_ex(s, len, 0, &sp)) goto fail;
    size_t k = 0;
    for (size_t i = 0, m; i < len; i += m) {
        uint32_t cp = fy_utf8_get(s, len, i, &m);
        while (k < sp.n && sp.v[k].start + sp.v[k].len <= i) k++;
        int in = k < sp.n && sp.v[k].start <= i && sp.v[k].kind != FY_SPAN_NUMUNIT;
        t->raw[t->n] = cp == 0xFFFD && m == 1 ? (unsigned char)s[i] : 0;
        t->prot[t->n] = in || t->raw[t->n];
        t->cp[t->n] = cp;
        t->n++;
    }
    free(sp.v);
    return 0;
fail:
    free(sp.v);
    cp_text_free(t);
    return FY_ENOMEM;
}

static char *encode(const cp_text *t)
{
    fy_buf b = {0};
    for (size_t i = 0; i < t->n; i++) {
        if (t->raw[i])
            fy_buf_putc(&b, (char)t->raw[i]);
        else
            fy_buf_putcp(&b, t->cp[i]);
    }
    return fy_buf_take(&b, NULL);
}

/* Inserts cp before position i. 0 or FY_ENOMEM. */
static int insert(cp_text *t, size_t i, uint32_t cp)
{
    uint32_t *c = realloc(t->cp, (t->n + 2) * sizeof *c);
    if (c) t->cp = c;
    unsigned char *r = c ? realloc(t->raw, t->n + 2) : NULL;
    if (r) t->raw = r;
    unsigned char *p = r ? realloc(t->prot, t->n + 2) : NULL;
    if (!p) return FY_ENOMEM;
    t->prot = p;
    memmove(t->cp + i + 1, t->cp + i, (t->n - i) * sizeof *t->cp);
    memmove(t->raw + i + 1, t->raw + i, t->n - i);
    memmove(t->prot + i + 1, t->prot + i, t->n - i);
    t->cp[i] = cp, t->raw[i] = 0, t->prot[i] = 0;
    t->n++;
    return 0;
}

static int is_space(uint32_t c)
{
    return c == ' ' || c == '\t';
}

static int is_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

/* ---- quotation marks ---------------------------------------------------------- */

/* Can the mark at i open a quotation (start, space or an opening bracket
 * before it, a non-space after it) / close one (a non-space before it)? */
static int can_open(const cp_text *t, size_t i)
{
    uint32_t b = i ? t->cp[i - 1] : ' ';
    return i + 1 < t->n && !fy_cp_is_space(t->cp[i + 1]) && !t->prot[i + 1] &&
           (fy_cp_is_space(b) || b == '(' || b == '[' || b == 0x2014 || b == 0x2013);
}

static int can_close(const cp_text *t, size_t i)
{
    return i > 0 && !fy_cp_is_space(t->cp[i - 1]) && !t->prot[i - 1];
}

/* Pairs of (open, close) marks -> the row's quotes, when every such mark of
 * the text is in a well-formed pair; else nothing changes. */
static void requote(cp_text *t, uint32_t open, uint32_t close, const uint32_t q[2])
{
    size_t pos[64], n = 0;
    for (size_t i = 0; i < t->n && n < 64; i++)
        if (!t->prot[i] && (t->cp[i] == open || t->cp[i] == close)) pos[n++] = i;
    if (n == 0 || n % 2 || n == 64) return;
    for (size_t k = 0; k < n; k += 2)
        if (t->cp[pos[k]] != open || t->cp[pos[k + 1]] != close || !can_open(t, pos[k]) ||
            !can_close(t, pos[k + 1]) || (k + 2 < n && pos[k + 1] + 1 == pos[k + 2]))
            return;
    for (size_t k = 0; k < n; k += 2) t->cp[pos[k]] = q[0], t->cp[pos[k + 1]] = q[1];
}

static void pass_quotes(cp_text *t, const fy_lang_rules *r)
{
    if (!r->quotes[0]) return;
    requote(t, '"', '"', r->quotes);
    /* English “ ” where the language opens low („) or with ”: never its own. */
    if (r->quotes[0] == 0x201E || r->quotes[0] == 0x201D) requote(t, 0x201C, 0x201D, r->quotes);
}

/* ---- French spacing ------------------------------------------------------------- */

static int no_break(uint32_t c)
{
    return c == 0xA0 || c == NNBSP;
}

/* Before ; : ! ? (a run of them) and », after «: a narrow no-break space,
 * replacing a plain space, unless a no-break space is there already. */
static int pass_french(cp_text *t)
{
    for (size_t i = 0; i < t->n; i++) {
        uint32_t c = t->cp[i];
        if (t->prot[i]) continue;
        if (c == 0xAB && i + 1 < t->n && !t->prot[i + 1] && !no_break(t->cp[i + 1])) {
            if (is_space(t->cp[i + 1]))
                t->cp[i + 1] = NNBSP;
            else if (insert(t, i + 1, NNBSP))
                return FY_ENOMEM;
            continue;
        }
        int mark = c == ';' || c == ':' || c == '!' || c == '?' || c == 0xBB;
        if (!mark || i == 0) continue;
        uint32_t b = t->cp[i - 1], a = i + 1 < t->n ? t->cp[i + 1] : ' ';
        if (b == ';' || b == ':' || b == '!' || b == '?' || no_break(b)) continue;
        /* 10:30, a:b, ?x: not French punctuation between words */
        if (c != 0xBB && !(fy_cp_is_space(a) || a == 0xBB || a == '"' || a == ')' || a == ';' ||
                           a == ':' || a == '!' || a == '?' || a == '.' || a == 0x2026))
            continue;
        if (is_space(b)) {
            if (i >= 2 && !fy_cp_is_space(t->cp[i - 2])) t->cp[i - 1] = NNBSP;
        } else if (insert(t, i, NNBSP)) {
            return FY_ENOMEM;
        }
    }
    return 0;
}

/* ---- Spanish opening marks --------------------------------------------------------- */

/* A sentence ending in a run of ? (of !) without any ¿ (¡) opens with one,
 * before its first word (after opening quotes, brackets and dashes). */
static int pass_inverted(cp_text *t)
{
    size_t e = t->n;
    while (e > 0 && (fy_cp_is_space(t->cp[e - 1]) || t->cp[e - 1] == '"' || t->cp[e - 1] == 0xBB ||
                     t->cp[e - 1] == 0x201D || t->cp[e - 1] == ')'))
        e--;
    if (e == 0 || t->prot[e - 1] || (t->cp[e - 1] != '?' && t->cp[e - 1] != '!')) return 0;
    uint32_t end = t->cp[e - 1], open = end == '?' ? 0xBF : 0xA1;
    for (size_t k = e; k-- > 0 && (t->cp[k] == '?' || t->cp[k] == '!');)
        if (t->cp[k] != end) return 0; /* ?! and !?: leave them */
    for (size_t i = 0; i < t->n; i++)
        if (t->cp[i] == open) return 0;
    size_t a = 0; /* the first word: a letter, a digit or a protected span */
    while (a < e && !t->prot[a] && !fy_cp_is_letter(t->cp[a]) && !is_digit(t->cp[a])) a++;
    return a < e ? insert(t, a, open) : 0;
}

/* ---- Arabic punctuation and the danda ------------------------------------------------ */

static int arabic_letter(uint32_t c)
{
    const char *sc = fy_cp_script(c);
    return sc && !strcmp(sc, "Arab");
}

/* , ; ? after an Arabic word -> ، ؛ ؟ */
static void pass_arabic(cp_text *t)
{
    for (size_t i = 1; i < t->n; i++) {
        uint32_t c = t->cp[i];
        if (t->prot[i] || (c != ',' && c != ';' && c != '?')) continue;
        size_t b = i;
        while (b > 0 && is_space(t->cp[b - 1])) b--;
        if (b == 0 || !arabic_letter(t->cp[b - 1]) || t->prot[b - 1]) continue;
        t->cp[i] = c == ',' ? 0x060C : c == ';' ? 0x061B : 0x061F;
    }
}

/* A final '.' right after a letter of the language's script -> । */
static void pass_danda(cp_text *t, const fy_lang_rules *r)
{
    size_t e = t->n;
    while (e > 0 && (fy_cp_is_space(t->cp[e - 1]) || t->cp[e - 1] == '"' ||
                     t->cp[e - 1] == 0x201D || t->cp[e - 1] == ')'))
        e--;
    if (e < 2 || t->cp[e - 1] != '.' || t->prot[e - 1] || t->prot[e - 2]) return;
    const char *sc = fy_cp_script(t->cp[e - 2]);
    if (sc && r->script && !strcmp(sc, r->script)) t->cp[e - 1] = 0x0964;
}

/* ---- the clean-up of a target -------------------------------------------------------- */

static char *punctuate(char *s, const fy_lang_rules *r)
{
    unsigned lang = FY_LR_FRENCH | FY_LR_INVERTED | FY_LR_ARABIC | FY_LR_DANDA;
    if (!s || (!(r->flags & lang) && !r->quotes[0])) return s;
    cp_text t;
    int rc = decode(s, strlen(s), &t);
    free(s);
    if (rc) return NULL;
    pass_quotes(&t, r);
    if (r->flags & FY_LR_ARABIC) pass_arabic(&t);
    if (r->flags & FY_LR_DANDA) pass_danda(&t, r);
    if ((r->flags & FY_LR_INVERTED) && pass_inverted(&t)) rc = FY_ENOMEM;
    if (!rc && (r->flags & FY_LR_FRENCH) && pass_french(&t)) rc = FY_ENOMEM;
    char *out = rc ? NULL : encode(&t);
    cp_text_free(&t);
    return out;
}

char *fy_cleanup_for(const fy_lang_rules *r, const char *s, size_t len)
{
    if (!r) r = fy_lang_rules_default();
    if (!s) s = "", len = 0;
    if (r->cleanup == FY_CLEAN_CJK) return fy_cleanup_cjk(s, len, r);
    unsigned words = r->cleanup == FY_CLEAN_ALPHA ? r->flags : (r->flags & FY_LR_FULLWIDTH);
    return punctuate(fy_cleanup_words(s, len, words), r);
}

char *fy_cleanup(const char *target, const char *s, size_t len)
{
    char tag[FY_LANG_MAX];
    if (fy_lang_normalize(target, tag) != 0) tag[0] = '\0';
    return fy_cleanup_for(fy_lang_rules_of(tag), s, len);
}
