/* beam.c - beam search over one sub-batch of segments, as Marian's
 * BeamSearch::search (browsermt/marian-dev, the fork bergamot-translator
 * 0.4.9 runs) searches one sentence with the reference's settings (see
 * docs/architecture.md, "Beam search"):
 *
 *  - rows are hypotheses: a segment's live ones are contiguous rows that
 *    share its encoder context (keys/values, never copied) and shortlist;
 *    the first step has one row per segment (the empty start);
 *  - each step, every row's candidates are its path score + the logit of
 *    each allowed token (skip-cost: no softmax; never <unk>); the segment
 *    keeps its `width` best, ties going to the lower row, then the lower
 *    column (the order in which the reference's partial_sort admits them);
 *  - a kept candidate ending on EOS finishes (normalised with L = t + 1
 *    steps) and width drops by one: the beam shrinks, and the segment is
 *    done when it is empty; at the length limit every kept one finishes;
 *  - each new row takes its parent's SSRU cells (double-buffered);
 *  - the finished hypotheses, sorted by normalised score (stable: the one
 *    that finished first wins a tie, as the reference's priority queue
 *    keeps the first of equal tops), are the segment's n-best list.
 *
 * Rows never mix across segments, so a segment's result does not depend
 * on its batch (the same as one sentence per call in the reference).
 */
#include <math.h>
#include <string.h>

#include "translate/translator_impl.h"

/* One candidate expansion: row's path score + a token's logit. */
typedef struct cand {
    float score;
    int row;
    int32_t word;
} cand;

/* The k + 1 best candidates of rows [first, first + count) into top, best
 * first, ties in row-then-column order (a candidate enters only when it
 * beats the last one kept). Each row's own best (the backend's selection,
 * w->topk of them, best first, ties in column order) are enough: a
 * candidate below a row's w->topk >= k + 1 best cannot be among the
 * segment's k + 1. Returns how many there are (at most k + 1): the first
 * k are kept, top[k] is the best one dropped. */
static int best_candidates(const fy_worker *w, int first, int count, int k, cand *top)
{
    int n = 0, cap = k + 1, K = w->topk;
    for (int r = first; r < first + count; r++) {
        const float *v = w->topv + (size_t)r * K;
        const int32_t *id = w->topi + (size_t)r * K;
        for (int c = 0; c < K && id[c] >= 0; c++) {
            if (n == cap && !(v[c] > top[n - 1].score)) break; /* the rest are no better */
            int p = n < cap ? n++ : n - 1;
            for (; p > 0 && top[p - 1].score < v[c]; p--) top[p] = top[p - 1];
            top[p] = (cand){v[c], r, id[c]};
        }
    }
    return n;
}

/* Records a finished hypothesis of g: node its last choice, len steps. */
static void finish(const fy_translator *t, fy_segment *g, int node, int len, float path)
{
    fy_hyp *h = &g->hyp[g->nhyp++];
    h->node = node;
    h->len = len;
    h->path = path;
    h->score = fy_tr_normalise(t, path, len);
}

/* No candidate at all (a shortlist of <unk> alone): the live hypotheses
 * end as they are. */
static void finish_rows(const fy_translator *t, fy_worker *w, fy_segment *g, int s, int step)
{
    fy_beam_scratch *bs = &w->beam;
    for (int r = bs->first[s]; r < bs->first[s] + bs->count[s]; r++)
        finish(t, g, bs->node[r], step, bs->score[r]);
    bs->count[s] = 0;
}

/* Segment s's choice at step `step`: keeps its best candidates; the
 * finished leave the beam, the others become rows of the next step,
 * appended at *next. */
static void advance_segment(const fy_translator *t, fy_worker *w, fy_sentence *sent,
                            fy_segment *segs, int s, int step, int *next)
{
    fy_beam_scratch *bs = &w->beam;
    int k = bs->width[s];
    const fy_row *rows = w->rows;
    fy_segment *g = &segs[rows[bs->first[s]].seg];
    cand top[FY_BEAM_MAX + 1];
    int n = best_candidates(w, bs->first[s], bs->count[s], k, top);
    if (n == 0) {
        finish_rows(t, w, g, s, step);
        return;
    }
    float *gap = &sent[g->sent].gap;
    if (n > k && top[k - 1].score - top[k].score < *gap) *gap = top[k - 1].score - top[k].score;
    /* Marian: after step t the hypotheses are final once t + 1 >=
     * max-length-factor x width, compared in float. */
    int last = (float)(step + 1) >= g->limit || step + 1 >= g->cap;
    int kept = n < k ? n : k, live = 0;
    bs->first[s] = *next;
    for (int i = 0; i < kept; i++) {
        const cand *c = &top[i];
        int node = g->nnodes++;
        g->nodes[node] = (fy_bnode){c->word, bs->node[c->row]};
        if (c->word == t->trg_eos || last) {
            finish(t, g, node, step + 1, c->score);
            continue;
        }
        int j = (*next)++;
        bs->next[j] = (fy_row){.seg = rows[c->row].seg, .slot = rows[c->row].slot, .last = c->word};
        bs->next_score[j] = c->score;
        bs->next_node[j] = node;
        bs->parent[j] = c->row;
        live++;
    }
    bs->width[s] = live;
    bs->count[s] = live;
}

/* Makes the next step's rows current: each continues its parent's
 * hypothesis (the backend moves the SSRU cells). Returns the row count or
 * a negative code. */
static int next_rows(fy_worker *w, int rows, fy_error *err)
{
    fy_beam_scratch *bs = &w->beam;
    for (int j = 0; j < rows; j++) {
        w->rows[j] = bs->next[j];
        bs->score[j] = bs->next_score[j];
        bs->node[j] = bs->next_node[j];
    }
    if (!rows) return 0;
    int rc = w->be->rows_keep(w->run, bs->parent, rows, err);
    return rc < 0 ? rc : rows;
}

/* Sorts g's finished hypotheses, best first (stable), spells out their
 * tokens from the grid, and notes the margin of the final choice. */
static void finalise(const fy_translator *t, fy_segment *g, fy_sentence *sent)
{
    for (int i = 1; i < g->nhyp; i++) {
        fy_hyp h = g->hyp[i];
        int p = i;
        for (; p > 0 && g->hyp[p - 1].score < h.score; p--) g->hyp[p] = g->hyp[p - 1];
        g->hyp[p] = h;
    }
    for (int i = 0; i < g->nhyp; i++) {
        fy_hyp *h = &g->hyp[i];
        int at = h->len;
        for (int node = h->node; node >= 0 && at > 0; node = g->nodes[node].parent)
            h->tok[--at] = g->nodes[node].word;
        h->ntok = h->len;
        if (h->ntok > 0 && h->tok[h->ntok - 1] == t->trg_eos) h->ntok--;
    }
    if (g->nhyp > 1 && g->hyp[0].score - g->hyp[1].score < sent[g->sent].gap)
        sent[g->sent].gap = g->hyp[0].score - g->hyp[1].score;
    if (g->nhyp > 0) {
        g->out = g->hyp[0].tok;
        g->nout = g->hyp[0].ntok;
    }
}

/* The first step's rows: one empty hypothesis per segment. */
static int start_rows(fy_worker *w, fy_segment *segs, const int *idx, int ns, int beam,
                      fy_error *err)
{
    fy_beam_scratch *bs = &w->beam;
    for (int r = 0; r < ns; r++) {
        w->rows[r] = (fy_row){.seg = idx[r], .slot = r, .last = -1};
        w->slot[r] = r;
        bs->score[r] = 0.0f;
        bs->node[r] = -1;
        bs->first[r] = r;
        bs->count[r] = 1;
        bs->width[r] = beam;
        segs[idx[r]].nhyp = 0;
        segs[idx[r]].nnodes = 0;
    }
    return w->be->rows_begin(w->run, w->slot, ns, err);
}

int fy_beam_decode_rows(const fy_translator *t, fy_worker *w, fy_sentence *sent, fy_segment *segs,
                        const int *idx, int ns, int beam, fy_error *err)
{
    int rc = fy_tr_encode_slots(t, w, sent, segs, idx, ns, err);
    if (rc >= 0) rc = start_rows(w, segs, idx, ns, beam, err);
    int rows = ns;
    for (int step = 0; rc >= 0 && rows > 0; step++) {
        if (fy_tr_aborted(w, err)) return FY_ECANCELED;
        for (int r = 0; r < rows; r++) w->last[r] = w->rows[r].last;
        fy_nn_step st = {.rows = rows,
                         .step = step,
                         .last = w->last,
                         .k = w->topk,
                         .path = w->beam.score,
                         .topv = w->topv,
                         .topi = w->topi};
        if ((rc = w->be->step(w->run, &st, err)) < 0) break;
        int next = 0;
        for (int s = 0; s < ns; s++)
            if (w->beam.count[s]) advance_segment(t, w, sent, segs, s, step, &next);
        rc = rows = next_rows(w, next, err);
    }
    if (rc < 0) return rc;
    for (int s = 0; s < ns; s++) finalise(t, &segs[idx[s]], sent);
    return 0;
}
