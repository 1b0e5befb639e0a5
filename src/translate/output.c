/* output.c - from decoded tokens to texts: each sentence's translation
 * (its segments' pieces joined) and its n-best list, and the distinct
 * alternatives the scheduler keeps. */
#include <stdlib.h>
#include <string.h>

#include "text/spm.h"
#include "translate/translator_impl.h"

/* Removes from s[0..len) the control characters the engine can produce
 * (byte pieces like <0x07>, which synthetic and real models emit: BEL,
 * DC3...) and no reader of a translation wants: C0 controls but tab, LF
 * and CR, DEL, and the C1 controls U+0080..U+009F. U+0000 could not be
 * kept anyway (C strings), the others would reach terminals, JSON, the page
 * and documents (XML 1.0 cannot hold them: a .docx heading came back
 * empty). One rule, here where the engine's text is made, so every output
 * (and the cache) has it; conformance compares the reference's text after
 * the same rule (tests/conformance, comparable()). */
static void drop_controls(char *s, size_t len)
{
    size_t w = 0;
    for (size_t r = 0; r < len; r++) {
        unsigned char c = (unsigned char)s[r];
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) continue;
        if (c == 0xC2 && r + 1 < len && (unsigned char)s[r + 1] >= 0x80 &&
            (unsigned char)s[r + 1] <= 0x9F) {
            r++; /* U+0080..U+009F: two bytes */
            continue;
        }
        s[w++] = (char)c;
    }
    s[w] = '\0';
}

/* The tokens of segment g's hypothesis j (-1: its best, out), or the last
 * one it has when it has fewer. */
static const int32_t *seg_tokens(const fy_segment *g, int j, int *n)
{
    if (j < 0 || !g->nhyp) {
        *n = g->nout;
        return g->out;
    }
    const fy_hyp *h = &g->hyp[j < g->nhyp ? j : g->nhyp - 1];
    *n = h->ntok;
    return h->tok;
}

/* Joins the decoded segments segs[k0..k1) (the reference concatenates the
 * pieces of a sentence's segments with nothing in between), each one's
 * hypothesis j (see seg_tokens), into *out (malloc'd). */
static int decode_segments(const fy_translator *t, const fy_segment *segs, int k0, int k1, int j,
                           char **out, fy_error *err)
{
    size_t total = 0, at = 0;
    int n;
    for (int k = k0; k < k1; k++) {
        const int32_t *tok = seg_tokens(&segs[k], j, &n);
        long len = fy_spm_decode(t->trg_spm, tok, (size_t)n, NULL, 0, err);
        if (len < 0) return (int)len;
        total += (size_t)len;
    }
    if (!(*out = malloc(total + 1))) return fy_err(err, FY_ENOMEM, "out of memory");
    (*out)[0] = '\0';
    for (int k = k0; k < k1; k++) {
        const int32_t *tok = seg_tokens(&segs[k], j, &n);
        long len = fy_spm_decode(t->trg_spm, tok, (size_t)n, *out + at, total + 1 - at, err);
        if (len < 0) return (int)len;
        at += (size_t)len;
    }
    drop_controls(*out, at);
    return 0;
}

/* Sentence i's n-best list from its segments segs[k0..k1): hypothesis j
 * joins their j-th hypotheses, scored by the mean of their scores. */
static int sentence_nbest(const fy_translator *t, const fy_segment *segs, int k0, int k1,
                          fy_nbest *nb, fy_error *err)
{
    int count = 1;
    for (int k = k0; k < k1; k++)
        if (segs[k].nhyp > count) count = segs[k].nhyp;
    if (!(nb->hyp = calloc((size_t)count, sizeof *nb->hyp)))
        return fy_err(err, FY_ENOMEM, "out of memory");
    for (int j = 0; j < count; j++, nb->n++) {
        fy_hypothesis *h = &nb->hyp[j];
        int rc = decode_segments(t, segs, k0, k1, j, &h->text, err);
        if (rc < 0) return rc;
        float sum = 0.0f;
        for (int k = k0; k < k1; k++) {
            const fy_segment *g = &segs[k];
            if (!g->nhyp) continue;
            const fy_hyp *y = &g->hyp[j < g->nhyp ? j : g->nhyp - 1];
            sum += y->score;
            h->tokens += y->ntok;
        }
        h->score = k1 > k0 ? sum / (float)(k1 - k0) : 0.0f;
    }
    return 0;
}

int fy_tr_assemble(const fy_translator *t, const fy_segment *segs, int nseg, size_t n, char **out,
                   fy_nbest *nbest, fy_error *err)
{
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        int k0 = k;
        while (k < nseg && segs[k].sent == (int)i) k++;
        int rc = decode_segments(t, segs, k0, k, -1, &out[i], err);
        if (rc >= 0 && nbest) rc = sentence_nbest(t, segs, k0, k, &nbest[i], err);
        if (rc < 0) return rc;
    }
    return 0;
}

void fy_tr_greedy_hyps(const fy_translator *t, fy_segment *segs, int nseg, fy_hyp *hyps)
{
    for (int k = 0; k < nseg; k++) {
        fy_segment *g = &segs[k];
        int len = g->nout + g->eos;
        hyps[k] = (fy_hyp){.tok = g->out,
                           .ntok = g->nout,
                           .len = len,
                           .path = g->path,
                           .score = fy_tr_normalise(t, g->path, len),
                           .node = -1};
        g->hyp = &hyps[k];
        g->nhyp = 1;
    }
}

void fy_nbest_clear(fy_nbest *nb)
{
    if (!nb) return;
    for (int j = 0; nb->hyp && j < nb->n; j++) free(nb->hyp[j].text);
    free(nb->hyp);
    nb->hyp = NULL;
    nb->n = 0;
}

int fy_tr_alternatives(fy_nbest *nb, const char *best, char ***out, fy_error *err)
{
    char **list = nb->n > 1 ? calloc((size_t)nb->n, sizeof *list) : NULL;
    if (nb->n > 1 && !list) return fy_err(err, FY_ENOMEM, "out of memory");
    size_t k = 0;
    for (int j = 1; list && j < nb->n; j++) {
        char *s = nb->hyp[j].text;
        int seen = !strcmp(s, best);
        for (size_t i = 0; i < k && !seen; i++) seen = !strcmp(s, list[i]);
        if (seen) continue;
        list[k++] = s;
        nb->hyp[j].text = NULL;
    }
    if (list && !k) {
        free(list);
        list = NULL;
    }
    *out = list;
    return 0;
}
