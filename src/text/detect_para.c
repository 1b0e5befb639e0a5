/* detect_para.c - the language of each paragraph of a mixed document
 * (fy_detect_paragraphs in detect.h). Lines are detected alone, weak lines
 * follow their neighbours, and runs of one language become parts.
 */
#include "text/detect.h"
#include "text/text_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEAK_LETTERS 24 /* fewer bytes of letters, unreliable: a line that follows */

typedef struct line {
    size_t a, e;   /* flat text */
    char lang[16]; /* "" until decided */
    int strong;
} line;

static size_t letter_bytes(const char *s, size_t n)
{
    size_t k = 0, m;
    for (size_t i = 0; i < n; i += m)
        if (fy_cp_is_letter(fy_utf8_get(s, n, i, &m))) k += m;
    return k;
}

/* Cuts flat text t[0..n) into lines and detects each. */
static int detect_lines(const char *t, size_t n, line **out, size_t *nl)
{
    line *v = NULL;
    size_t cap = 0, count = 0;
    for (size_t a = 0; a < n;) {
        const char *nlp = memchr(t + a, '\n', n - a);
        size_t e = nlp ? (size_t)(nlp - t) : n;
        if (fy_vec_reserve((void **)&v, &cap, count + 1, sizeof *v)) goto fail;
        line *l = &v[count++];
        memset(l, 0, sizeof *l);
        l->a = a, l->e = e;
        fy_detection d;
        if (fy_detect(t + a, e - a, 0, &d)) goto fail;
        if (d.n) snprintf(l->lang, sizeof l->lang, "%s", d.top[0].lang);
        l->strong = d.n && (d.reliable || letter_bytes(t + a, e - a) >= WEAK_LETTERS);
        a = nlp ? e + 1 : n;
    }
    *out = v, *nl = count;
    return 0;
fail:
    free(v);
    return FY_ENOMEM;
}

/* Weak lines take the language of the strong line before them, the first
 * ones that of the first strong line. Returns 0 when no line is strong. */
static int spread(line *v, size_t n)
{
    size_t first = 0;
    while (first < n && !v[first].strong) first++;
    if (first == n) return 0;
    const char *cur = v[first].lang;
    for (size_t k = 0; k < n; k++) {
        if (v[k].strong) cur = v[k].lang;
        if (!v[k].strong) memcpy(v[k].lang, cur, sizeof v[k].lang);
    }
    return 1;
}

/* Appends the part text[a..e) with its detection. */
static int add_part(const char *text, size_t a, size_t e, int html, fy_detect_part **p, size_t *n,
                    size_t *cap)
{
    if (fy_vec_reserve((void **)p, cap, *n + 1, sizeof **p)) return FY_ENOMEM;
    fy_detect_part *x = &(*p)[(*n)++];
    x->start = a, x->len = e - a;
    return fy_detect(text + a, e - a, html, &x->d);
}

int fy_detect_paragraphs(const char *text, size_t len, int html, fy_detect_part **parts, size_t *n)
{
    *parts = NULL, *n = 0;
    if ((!text && len) || !fy_utf8_valid(text ? text : "", len, NULL)) return FY_EINVAL;
    if (!len) return 0;
    fy_flat f = {0};
    line *v = NULL;
    size_t nl = 0, cap = 0;
    int rc = FY_ENOMEM;
    if (fy_flatten(text, len, html, 0, &f) || detect_lines(f.text, f.len, &v, &nl)) goto done;
    rc = 0;
    if (!spread(v, nl)) {
        rc = add_part(text, 0, len, html, parts, n, &cap);
        goto done;
    }
    size_t start = 0;
    for (size_t k = 1; k <= nl && !rc; k++) {
        if (k < nl && !strcmp(v[k].lang, v[k - 1].lang)) continue;
        /* The part ends where the next line's first character came from. */
        size_t end = k < nl && v[k].a < f.len ? fy_flat_src0(&f, v[k].a) : len;
        if (end > start || k == nl) rc = add_part(text, start, end, html, parts, n, &cap);
        start = end;
    }
done:
    fy_flat_free(&f);
    free(v);
    if (rc) free(*parts), *parts = NULL, *n = 0;
    return rc;
}
