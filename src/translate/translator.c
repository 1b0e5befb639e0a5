/* translator.c - the engine: opening a model, per-thread workers, and the
 * batch translation loop (encode, encoder, SSRU decoder: greedy here, beam
 * search in beam.c; texts from tokens in output.c).
 *
 * Sections: the translator (open/free), the worker and its arena, source
 * segmentation, the shortlist, greedy decoding of one sub-batch, and the
 * public batch entry point that ties them together.
 */
#include "translate/translator.h"
#include "translate/scheduler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text/spm.h"
#include "util/arena.h"
#include "translate/translator_impl.h"

/* ------------------------------------------------------------------------ */
/* The translator                                                            */
/* ------------------------------------------------------------------------ */

void fy_translator_options_default(fy_translator_options *o)
{
    o->max_length_factor = 2.0f;
    o->use_shortlist = 1;
    o->max_batch_tokens = 2048;
    o->max_batch_sentences = 32;
    o->max_beam = 8;
    o->length_norm = 1.0f;
    o->word_penalty = 0.0f;
}

static int check_options(const fy_translator_options *o, fy_error *err)
{
    if (!(o->max_length_factor > 0.0f && o->max_length_factor <= 16.0f))
        return fy_err(err, FY_EINVAL, "max-length-factor %g is outside (0, 16]",
                      (double)o->max_length_factor);
    if (o->max_batch_tokens < FY_SEGMENT_TOKENS || o->max_batch_tokens > (1 << 20))
        return fy_err(err, FY_EINVAL, "max batch tokens %d is outside [%d, %d]",
                      o->max_batch_tokens, FY_SEGMENT_TOKENS, 1 << 20);
    if (o->max_batch_sentences < 1 || o->max_batch_sentences > 4096)
        return fy_err(err, FY_EINVAL, "max batch sentences %d is outside [1, 4096]",
                      o->max_batch_sentences);
    if (o->max_beam < 1 || o->max_beam > FY_BEAM_MAX)
        return fy_err(err, FY_EINVAL, "max beam %d is outside [1, %d]", o->max_beam, FY_BEAM_MAX);
    if (!(o->length_norm >= 0.0f && o->length_norm <= 16.0f))
        return fy_err(err, FY_EINVAL, "length normalisation %g is outside [0, 16]",
                      (double)o->length_norm);
    if (!(fabsf(o->word_penalty) <= 1e6f))
        return fy_err(err, FY_EINVAL, "word penalty %g is not a reasonable number",
                      (double)o->word_penalty);
    return 0;
}

/* Views of the bundle's vocabularies and shortlist. */
static void bind_bundle(fy_translator *t)
{
    fy_bundle *b = t->b;
    t->cfg = &b->cfg;
    t->src_spm = b->src_spm;
    t->trg_spm = b->trg_spm;
    t->shared_vocab = b->shared_vocab;
    t->shortlist = b->shortlist;
    t->src_vocab = b->cfg.src_vocab_size;
    t->trg_vocab = b->cfg.trg_vocab_size;
    t->src_eos = b->src_eos;
    t->trg_eos = b->trg_eos;
    t->trg_unk = b->trg_unk;
}

/* The network on the CPU, made now so that a bad model fails at open; other
 * devices get theirs at first use (fy_worker_new_on). */
static int open_network(fy_translator *t, fy_error *err)
{
    t->max_out = (int)ceilf(t->opt.max_length_factor * (float)FY_SEGMENT_TOKENS);
    if (t->max_out < 1) t->max_out = 1;
    t->spec = (fy_nn_spec){
        .model = t->b->model,
        .cfg = t->cfg,
        .src_vocab = t->src_vocab,
        .trg_vocab = t->trg_vocab,
        .trg_unk = t->trg_unk,
        .max_src_len = FY_SEGMENT_TOKENS,
        .max_steps = t->max_out,
    };
    t->places = calloc(1, sizeof *t->places);
    if (!t->places) return fy_err(err, FY_ENOMEM, "out of memory");
    pthread_mutex_init(&t->places->lock, NULL);
    fy_tr_place *cpu = &t->places->at[t->places->n++];
    cpu->dev = fy_nn_cpu_device();
    cpu->net = fy_nn_cpu.net_new(cpu->dev, &t->spec, err);
    return cpu->net ? 0 : err->code;
}

fy_translator *fy_translator_open(const char *model_dir, const fy_translator_options *o,
                                  fy_error *err)
{
    fy_error local;
    if (!err) err = &local;
    fy_err_clear(err);
    fy_translator *t = calloc(1, sizeof *t);
    if (!t) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    if (o)
        t->opt = *o;
    else
        fy_translator_options_default(&t->opt);
    if (check_options(&t->opt, err) < 0) goto fail;
    if (!(t->b = fy_bundle_open(model_dir, t->opt.use_shortlist, err))) goto fail;
    bind_bundle(t);
    if (open_network(t, err) < 0) goto fail;
    return t;
fail:
    fy_translator_free(t);
    return NULL;
}

void fy_translator_free(fy_translator *t)
{
    if (!t) return;
    for (int i = 0; t->places && i < t->places->n; i++) {
        fy_tr_place *p = &t->places->at[i];
        if (p->net) p->dev->be->net_free(p->net);
    }
    if (t->places) pthread_mutex_destroy(&t->places->lock);
    free(t->places);
    fy_bundle_free(t->b);
    free(t);
}

const fy_bundle *fy_translator_bundle(const fy_translator *t)
{
    return t->b;
}

const fy_translator_options *fy_translator_options_get(const fy_translator *t)
{
    return &t->opt;
}

long fy_translator_count_tokens(const fy_translator *t, const char *text, size_t len)
{
    long n = fy_spm_encode(t->src_spm, text, len, NULL, 0, NULL);
    return n < 0 ? n : n + 1;
}

long fy_translator_count_target_tokens(const fy_translator *t, const char *text, size_t len)
{
    long n = fy_spm_encode(t->trg_spm, text, len, NULL, 0, NULL);
    return n < 0 ? n : n + 1;
}

/* ------------------------------------------------------------------------ */
/* Workers: the search's scratch, carved once, and a run on a device         */
/* ------------------------------------------------------------------------ */

/* Lays the worker's search buffers out in a (sizes only while a->base is
 * NULL). */
static void worker_layout(fy_worker *w, fy_arena *a)
{
    const fy_translator *t = w->t;
    size_t T = (size_t)w->max_tokens, B = (size_t)w->max_rows, V = (size_t)t->trg_vocab;
    size_t K = (size_t)t->opt.max_beam + 1, f = sizeof(float);

    w->ids = fy_arena_carve(a, T * sizeof(int32_t));
    w->len = fy_arena_carve(a, B * sizeof(int));
    w->rows = fy_arena_carve(a, B * sizeof(fy_row));
    w->from = fy_arena_carve(a, B * sizeof(int));
    w->slot = fy_arena_carve(a, B * sizeof(int));
    w->last = fy_arena_carve(a, B * sizeof(int32_t));
    w->pick = fy_arena_carve(a, B * sizeof(fy_nn_pick));
    w->done = fy_arena_carve(a, B);
    w->topk = (int)K;
    if (t->opt.max_beam > 1) {
        fy_beam_scratch *bs = &w->beam;
        w->topv = fy_arena_carve(a, B * K * f);
        w->topi = fy_arena_carve(a, B * K * sizeof(int32_t));
        bs->score = fy_arena_carve(a, B * f);
        bs->node = fy_arena_carve(a, B * sizeof(int));
        bs->next = fy_arena_carve(a, B * sizeof(fy_row));
        bs->next_score = fy_arena_carve(a, B * f);
        bs->next_node = fy_arena_carve(a, B * sizeof(int));
        bs->parent = fy_arena_carve(a, B * sizeof(int));
        bs->first = fy_arena_carve(a, B * sizeof(int));
        bs->count = fy_arena_carve(a, B * sizeof(int));
        bs->width = fy_arena_carve(a, B * sizeof(int));
    }
    w->bitmap_bytes = (V + 7) / 8;
    if (t->shortlist) {
        w->cols = fy_arena_carve(a, V * sizeof(int32_t));
        w->bits = fy_arena_carve(a, w->bitmap_bytes);
        w->sl_out = fy_arena_carve(a, V * sizeof(int32_t));
        w->sl_seen = fy_arena_carve(a, fy_shortlist_scratch_bytes(t->shortlist, t->trg_vocab));
    }
}

/* A worker's limits on dev: the options on the CPU (a batch's sentences,
 * or one segment's beam), the device's own where it wants bigger batches. */
static void worker_limits(const fy_translator *t, const fy_nn_dev *dev, int *tokens, int *rows)
{
    int b = t->opt.max_batch_sentences, beam = t->opt.max_beam;
    *tokens = t->opt.max_batch_tokens;
    *rows = b > beam ? b : beam;
    if (dev->be == &fy_nn_cpu) return;
    if (dev->max_tokens > *tokens) *tokens = dev->max_tokens;
    if (dev->max_rows > *rows) *rows = dev->max_rows;
}

static size_t search_bytes(const fy_translator *t, int tokens, int rows)
{
    fy_worker w = {.t = t, .max_tokens = tokens, .max_rows = rows};
    fy_arena a = {NULL, 0};
    worker_layout(&w, &a);
    return (a.used + 63) & ~(size_t)63;
}

size_t fy_translator_worker_bytes(const fy_translator *t)
{
    int tokens, rows;
    fy_tr_place *cpu = &t->places->at[0];
    worker_limits(t, cpu->dev, &tokens, &rows);
    return search_bytes(t, tokens, rows) + fy_nn_cpu.run_bytes(cpu->net, tokens, rows);
}

size_t fy_translator_heap_bytes(const fy_translator *t)
{
    size_t vocabs = fy_spm_memory_bytes(t->src_spm);
    if (t->trg_spm != t->src_spm) vocabs += fy_spm_memory_bytes(t->trg_spm);
    return vocabs + fy_nn_cpu.net_bytes(t->places->at[0].net);
}

/* The network on dev: made on first use there (the model is "placed"). */
static fy_nn_net *place_on(const fy_translator *t, fy_nn_dev *dev, fy_error *err)
{
    fy_tr_places *pl = t->places;
    pthread_mutex_lock(&pl->lock);
    fy_tr_place *p = NULL;
    for (int i = 0; i < pl->n && !p; i++)
        if (pl->at[i].dev == dev) p = &pl->at[i];
    if (!p && pl->n < FY_NN_DEV_MAX + 1) p = &pl->at[pl->n++], p->dev = dev;
    fy_nn_net *net = p ? p->net : NULL;
    if (p && !net) net = p->net = dev->be->net_new(dev, &t->spec, err);
    if (!p) fy_err(err, FY_ELIMIT, "a model on more than %d devices", FY_NN_DEV_MAX);
    pthread_mutex_unlock(&pl->lock);
    if (!net) fy_err_prefix(err, "%s", dev->name);
    return net;
}

fy_worker *fy_worker_new_on(const fy_translator *t, fy_nn_dev *dev, fy_error *err)
{
    fy_worker *w = calloc(1, sizeof *w);
    if (!w) goto oom;
    w->t = t;
    w->dev = dev ? dev : fy_nn_cpu_device();
    w->be = w->dev->be;
    worker_limits(t, w->dev, &w->max_tokens, &w->max_rows);
    fy_arena a = {NULL, 0};
    worker_layout(w, &a);
    if (!(w->arena = aligned_alloc(64, (a.used + 63) & ~(size_t)63))) goto oom;
    a = (fy_arena){w->arena, 0};
    worker_layout(w, &a);
    fy_nn_net *net = place_on(t, w->dev, err);
    if (!net) goto fail;
    if (!(w->run = w->be->run_new(net, w->max_tokens, w->max_rows, err))) goto fail;
    return w;
oom:
    fy_err(err, FY_ENOMEM, "out of memory for a translation worker");
fail:
    fy_worker_free(w);
    return NULL;
}

fy_worker *fy_worker_new(const fy_translator *t, fy_error *err)
{
    return fy_worker_new_on(t, NULL, err);
}

void fy_worker_free(fy_worker *w)
{
    if (!w) return;
    if (w->run) w->be->run_free(w->run);
    free(w->arena);
    free(w);
}

void fy_worker_trim(fy_worker *w)
{
    if (w && w->run && w->be->run_trim) w->be->run_trim(w->run);
}

/* ------------------------------------------------------------------------ */
/* Segments: the reference's max-length-break                                */
/* ------------------------------------------------------------------------ */

static int segment_cmp(const void *a, const void *b, void *ctx)
{
    const fy_segment *s = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    if (s[x].npieces != s[y].npieces) return s[x].npieces - s[y].npieces;
    return x - y;
}

/* Encodes text once into *ids (malloc'd, one slot more for EOS): a piece
 * covers at least a byte but for rare normalisations, so a buffer of the
 * text's length almost always fits; when not, encode again into the size
 * the first call reported. Returns the piece count or a negative code. */
static long encode(const fy_translator *t, const char *text, size_t len, int32_t **ids,
                   fy_error *err)
{
    size_t cap = len + 8;
    for (int round = 0; round < 2; round++) {
        int32_t *p = malloc((cap + 1) * sizeof *p);
        if (!p) return fy_err(err, FY_ENOMEM, "out of memory");
        long n = fy_spm_encode(t->src_spm, text, len, p, cap, err);
        if (n >= 0 && (size_t)n <= cap) {
            *ids = p;
            return n;
        }
        free(p);
        if (n < 0) return n;
        cap = (size_t)n;
    }
    return fy_err(err, FY_EINVAL, "the tokenizer gave two lengths for one text");
}

/* Encodes every sentence and cuts it into segments. On success *segs_out
 * (caller frees, and every sentence's ids) holds *nseg segments. */
static int make_segments(const fy_translator *t, const char *const *src, size_t n,
                         fy_sentence *sent, fy_segment **segs_out, int *nseg_out, fy_error *err)
{
    const int step = FY_SEGMENT_TOKENS - 1;
    size_t nseg = 0;
    for (size_t i = 0; i < n; i++) {
        if (!src[i]) return fy_err(err, FY_EINVAL, "sentence %zu is NULL", i);
        size_t len = strlen(src[i]);
        long np = encode(t, src[i], len, &sent[i].ids, err);
        if (np < 0) return (int)np;
        if (np > (1L << 24)) return fy_err(err, FY_ELIMIT, "sentence %zu is too long", i);
        sent[i].npieces = (int)np;
        sent[i].ids[np] = t->src_eos;
        sent[i].gap = INFINITY;
        nseg += ((size_t)np + step - 1) / step;
    }
    fy_segment *segs = calloc(nseg ? nseg : 1, sizeof *segs);
    if (!segs) return fy_err(err, FY_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int np = sent[i].npieces;
        /* The reference decodes a sentence's segments in one batch, so
         * each may run to factor x the widest of them. */
        int widest = (np < step ? np : step) + 1;
        float limit = t->opt.max_length_factor * (float)widest;
        for (int first = 0; first < np; first += step, k++) {
            segs[k].sent = (int)i;
            segs[k].first = first;
            segs[k].npieces = np - first < step ? np - first : step;
            segs[k].limit = limit;
            segs[k].cap = (int)ceilf(limit);
            if (segs[k].cap < 1) segs[k].cap = 1;
        }
    }
    *segs_out = segs;
    *nseg_out = (int)nseg;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Shortlist                                                                 */
/* ------------------------------------------------------------------------ */

/* Gives slot r the shortlist of sentence s as its columns (the sentence's
 * pieces and EOS, as the reference generates it for a one-sentence batch).
 * Ascending, like the reference's sorted list, so that the selection meets
 * ties in the same order. */
static int shortlist_slot(const fy_translator *t, fy_worker *w, const fy_sentence *s, int r,
                          fy_error *err)
{
    long n =
        fy_shortlist_select_ex(t->shortlist, s->ids, (size_t)s->npieces + 1, t->trg_vocab,
                               t->shared_vocab, w->sl_out, (size_t)t->trg_vocab, w->sl_seen, err);
    if (n < 0) return (int)n;
    uint8_t *bits = w->bits;
    memset(bits, 0, w->bitmap_bytes);
    for (long i = 0; i < n; i++) bits[w->sl_out[i] >> 3] |= (uint8_t)(1u << (w->sl_out[i] & 7));
    int nc = 0;
    for (int id = 0; id < t->trg_vocab; id++)
        if (bits[id >> 3] & (1u << (id & 7))) w->cols[nc++] = id;
    return w->be->set_columns(w->run, r, w->cols, nc, err);
}

/* ------------------------------------------------------------------------ */
/* Greedy decoding of one sub-batch                                          */
/* ------------------------------------------------------------------------ */

/* Marian's History: (path - word-penalty·L) / L^normalize, in float. */
float fy_tr_normalise(const fy_translator *t, float path, int len)
{
    if (len < 1) return path; /* nothing was decoded: nothing to divide */
    float l = (float)len;
    float lp = t->opt.length_norm == 1.0f ? l : powf(l, t->opt.length_norm);
    return (path - t->opt.word_penalty * l) / lp;
}

int fy_tr_encode_slots(const fy_translator *t, fy_worker *w, const fy_sentence *sent,
                       const fy_segment *segs, const int *idx, int ns, fy_error *err)
{
    int ntok = 0;
    for (int r = 0; r < ns; r++) {
        const fy_segment *g = &segs[idx[r]];
        w->len[r] = g->npieces + 1;
        memcpy(w->ids + ntok, sent[g->sent].ids + g->first, (size_t)g->npieces * sizeof(int32_t));
        w->ids[ntok + g->npieces] = t->src_eos;
        ntok += w->len[r];
    }
    int rc = w->be->encode(w->run, w->ids, w->len, ns, err);
    for (int r = 0; rc >= 0 && t->shortlist && r < ns; r++)
        rc = shortlist_slot(t, w, &sent[segs[idx[r]].sent], r, err);
    return rc;
}

/* Drops finished rows (done[r] != 0), keeping the others in order; the
 * backend moves their SSRU cells. Returns the new row count. */
static int compact_rows(fy_worker *w, int rows, const uint8_t *done, fy_error *err)
{
    int j = 0;
    for (int r = 0; r < rows; r++) {
        if (done[r]) continue;
        w->rows[j] = w->rows[r];
        w->from[j++] = r;
    }
    if (j == rows || j == 0) return j;
    int rc = w->be->rows_keep(w->run, w->from, j, err);
    return rc < 0 ? rc : j;
}

/* Records each row's chosen token; marks finished rows. */
static void choose_tokens(const fy_translator *t, fy_worker *w, fy_sentence *sent, fy_segment *segs,
                          int rows, int step, uint8_t *done)
{
    for (int r = 0; r < rows; r++) {
        fy_row *row = &w->rows[r];
        fy_segment *g = &segs[row->seg];
        const fy_nn_pick *p = &w->pick[r];
        int32_t tok = p->id;
        if (p->gap < sent[g->sent].gap) sent[g->sent].gap = p->gap;
        done[r] = 0;
        if (tok >= 0) g->path += p->value; /* the reference's path score, for n-best lists */
        if (tok < 0 || tok == t->trg_eos) {
            g->eos = tok >= 0;
            done[r] = 1;
            continue;
        }
        g->out[g->nout++] = tok;
        row->last = tok;
        /* Marian: after step t the hypothesis is final once t + 1 >=
         * max-length-factor x width, compared in float. */
        if ((float)(step + 1) >= g->limit || g->nout >= g->cap) done[r] = 1;
    }
}

/* Translates segments idx[0..ns) into their out buffers. */
static int decode_rows(const fy_translator *t, fy_worker *w, fy_sentence *sent, fy_segment *segs,
                       const int *idx, int ns, fy_error *err)
{
    int rc = fy_tr_encode_slots(t, w, sent, segs, idx, ns, err);
    for (int r = 0; r < ns; r++) {
        w->rows[r] = (fy_row){.seg = idx[r], .slot = r, .last = -1};
        w->slot[r] = r;
    }
    if (rc >= 0) rc = w->be->rows_begin(w->run, w->slot, ns, err);
    int rows = ns;
    for (int step = 0; rc >= 0 && rows > 0; step++) {
        if (fy_tr_aborted(w, err)) return FY_ECANCELED;
        for (int r = 0; r < rows; r++) w->last[r] = w->rows[r].last;
        fy_nn_step st = {.rows = rows, .step = step, .last = w->last, .pick = w->pick};
        if ((rc = w->be->step(w->run, &st, err)) < 0) break;
        choose_tokens(t, w, sent, segs, rows, step, w->done);
        rc = rows = compact_rows(w, rows, w->done, err);
    }
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------ */
/* The batch entry point                                                     */
/* ------------------------------------------------------------------------ */

/* Runs every segment, in sub-batches of similar lengths that fit the arena:
 * at most max_rows rows, one per segment or, with a beam, beam per segment. */
static int decode_all(const fy_translator *t, fy_worker *w, fy_sentence *sent, fy_segment *segs,
                      int nseg, int *order, int beam, fy_error *err)
{
    for (int i = 0; i < nseg; i++) order[i] = i;
    qsort_r(order, (size_t)nseg, sizeof *order, segment_cmp, segs);
    int per = beam > 1 ? w->max_rows / beam : w->max_rows;
    for (int i = 0; i < nseg;) {
        if (fy_tr_aborted(w, err)) return FY_ECANCELED;
        int ns = 0, tok = 0;
        while (i + ns < nseg && ns < per &&
               tok + segs[order[i + ns]].npieces + 1 <= w->max_tokens) {
            tok += segs[order[i + ns]].npieces + 1;
            ns++;
        }
        int rc = beam > 1 ? fy_beam_decode_rows(t, w, sent, segs, order + i, ns, beam, err)
                          : decode_rows(t, w, sent, segs, order + i, ns, err);
        if (rc < 0) return rc;
        i += ns;
    }
    return 0;
}

/* The per-call buffers: each segment's output tokens and, with a beam, its
 * hypotheses' tokens and search grid (cap x beam each); with beam 1 and
 * n-best lists, one hypothesis per segment. */
typedef struct call_buffers {
    int32_t *tok;
    fy_hyp *hyps;
    fy_bnode *nodes;
    int *order;
} call_buffers;

static int buffers_alloc(fy_segment *segs, int nseg, int beam, int lists, call_buffers *b,
                         fy_error *err)
{
    size_t caps = 0, ns = nseg ? (size_t)nseg : 1, bb = (size_t)beam;
    for (int k = 0; k < nseg; k++) caps += (size_t)segs[k].cap;
    caps = caps ? caps : 1;
    b->tok = malloc(caps * bb * sizeof *b->tok);
    b->order = malloc(ns * sizeof *b->order);
    b->hyps = beam > 1 || lists ? malloc(ns * bb * sizeof *b->hyps) : NULL;
    b->nodes = beam > 1 ? malloc(caps * bb * sizeof *b->nodes) : NULL;
    if (!b->tok || !b->order || ((beam > 1 || lists) && !b->hyps) || (beam > 1 && !b->nodes))
        return fy_err(err, FY_ENOMEM, "out of memory");
    size_t at = 0;
    for (int k = 0; k < nseg; at += (size_t)segs[k].cap * bb, k++) {
        segs[k].out = b->tok + at;
        if (beam < 2) continue;
        segs[k].hyp = b->hyps + (size_t)k * bb;
        segs[k].nodes = b->nodes + at;
        for (int j = 0; j < beam; j++) segs[k].hyp[j].tok = b->tok + at + (size_t)j * segs[k].cap;
    }
    return 0;
}

static void buffers_free(call_buffers *b)
{
    free(b->tok);
    free(b->hyps);
    free(b->nodes);
    free(b->order);
}

static void report(const fy_sentence *sent, const fy_segment *segs, int nseg, size_t n,
                   fy_translate_info *info)
{
    for (size_t i = 0; i < n; i++)
        info[i] = (fy_translate_info){.min_gap = sent[i].gap,
                                      .src_tokens = sent[i].npieces ? sent[i].npieces + 1 : 0};
    for (int k = 0; k < nseg; k++) {
        info[segs[k].sent].segments++;
        info[segs[k].sent].out_tokens += segs[k].nout;
    }
}

static void results_clear(char **out, fy_nbest *nbest, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(out[i]);
        out[i] = NULL;
        if (nbest) fy_nbest_clear(&nbest[i]);
    }
}

int fy_translate_beam(const fy_translator *t, fy_worker *w, const char *const *src, size_t n,
                      int beam, char **out, fy_nbest *nbest, fy_translate_info *info, fy_error *err)
{
    fy_error local;
    if (!err) err = &local;
    for (size_t i = 0; i < n; i++) {
        out[i] = NULL;
        if (nbest) nbest[i] = (fy_nbest){NULL, 0};
    }
    if (w->t != t) return fy_err(err, FY_EINVAL, "worker belongs to another translator");
    if (beam < 1 || beam > t->opt.max_beam)
        return fy_err(err, FY_EINVAL, "beam %d is outside [1, %d] (the model's max beam)", beam,
                      t->opt.max_beam);
    int rc = 0, nseg = 0;
    fy_segment *segs = NULL;
    call_buffers buf = {0};
    fy_sentence *sent = calloc(n ? n : 1, sizeof *sent);
    if (!sent) return fy_err(err, FY_ENOMEM, "out of memory");
    if ((rc = make_segments(t, src, n, sent, &segs, &nseg, err)) < 0) goto done;
    if ((rc = buffers_alloc(segs, nseg, beam, nbest != NULL, &buf, err)) < 0) goto done;
    fy_nn_dev_busy(w->dev, +1); /* idle cores' helpers join this worker */
    rc = decode_all(t, w, sent, segs, nseg, buf.order, beam, err);
    fy_nn_dev_busy(w->dev, -1);
    if (rc < 0) goto done;
    if (beam == 1 && nbest) fy_tr_greedy_hyps(t, segs, nseg, buf.hyps);
    if ((rc = fy_tr_assemble(t, segs, nseg, n, out, nbest, err)) < 0) goto done;
    if (info) report(sent, segs, nseg, n, info);
done:
    if (rc < 0) results_clear(out, nbest, n);
    for (size_t i = 0; i < n; i++) free(sent[i].ids);
    free(sent);
    free(segs);
    buffers_free(&buf);
    return rc;
}

int fy_translate_batch_ex(const fy_translator *t, fy_worker *w, const char *const *src, size_t n,
                          char **out, fy_translate_info *info, fy_error *err)
{
    return fy_translate_beam(t, w, src, n, 1, out, NULL, info, err);
}

int fy_translate_batch(const fy_translator *t, fy_worker *w, const char *const *src, size_t n,
                       char **out, fy_error *err)
{
    return fy_translate_batch_ex(t, w, src, n, out, NULL, err);
}

/* ---- the engine behind the scheduler's generic interface ---- */

static int engine_translate(void *ctx, void *worker, const char *const *src, size_t n, char **out,
                            float *gap, fy_error *err)
{
    fy_translate_info info[64];
    if (!gap || n > sizeof info / sizeof *info)
        return fy_translate_batch_ex(ctx, worker, src, n, out, NULL, err);
    int rc = fy_translate_batch_ex(ctx, worker, src, n, out, info, err);
    for (size_t i = 0; rc >= 0 && i < n; i++) gap[i] = info[i].min_gap;
    return rc;
}

static int engine_translate_beam(void *ctx, void *worker, const char *const *src, size_t n,
                                 int beam, char **out, char ***alts, float *gap, fy_error *err)
{
    fy_nbest *nb = calloc(n ? n : 1, sizeof *nb);
    fy_translate_info *info = calloc(n ? n : 1, sizeof *info);
    int rc = nb && info ? fy_translate_beam(ctx, worker, src, n, beam, out, nb, info, err)
                        : fy_err(err, FY_ENOMEM, "out of memory");
    for (size_t i = 0; rc >= 0 && i < n; i++) {
        if (gap) gap[i] = info[i].min_gap;
        rc = fy_tr_alternatives(&nb[i], out[i], &alts[i], err);
    }
    for (size_t i = 0; nb && i < n; i++) fy_nbest_clear(&nb[i]);
    free(nb);
    free(info);
    return rc;
}

void fy_worker_set_abort(fy_worker *w, const atomic_int *flag)
{
    w->abort = flag;
}

static void engine_worker_abort(void *w, const atomic_int *flag)
{
    fy_worker_set_abort(w, flag);
}

static void engine_worker_trim(void *w)
{
    fy_worker_trim(w);
}

static void *engine_worker_new(void *ctx, void *device, fy_error *err)
{
    return fy_worker_new_on(ctx, device, err);
}

static void engine_worker_free(void *w)
{
    fy_worker_free(w);
}

static long engine_count(void *ctx, const char *text, size_t len)
{
    return fy_translator_count_tokens(ctx, text, len);
}

void fy_translator_engine(const fy_translator *t, const char *name, fy_engine *e)
{
    *e = (fy_engine){
        .translate = engine_translate,
        .translate_beam = engine_translate_beam,
        .worker_new = engine_worker_new,
        .worker_abort = engine_worker_abort,
        .worker_free = engine_worker_free,
        .worker_trim = engine_worker_trim,
        .count_tokens = engine_count,
        .ctx = (void *)t, /* the engine's hooks only read through it */
        .name = name,
    };
}
