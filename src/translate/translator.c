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
#include <sys/mman.h> /* madvise */
#include <unistd.h>   /* sysconf */

#include "nn/ops.h"
#include "text/spm.h"
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

/* The float embedding table name: borrowed from the mapping when float32,
 * dequantised (q·(1/mult), as Marian's loader) when intgemm8. */
static int bind_embedding(fy_translator *t, const char *name, int vocab, int slot, fy_error *err)
{
    int d = t->cfg->dim_emb;
    const fy_tensor *e = fy_marian_find(t->b->model, name);
    if (!e) return fy_err(err, FY_EFORMAT, "%s: tensor %s is missing", t->b->files.model, name);
    if (e->ndim != 2 || e->shape[0] != vocab || e->shape[1] != d)
        return fy_err(err, FY_EFORMAT, "%s: tensor %s has shape [%d, %d], expected [%d, %d]",
                      t->b->files.model, name, e->shape[0], e->ndim > 1 ? e->shape[1] : 0, vocab,
                      d);
    if (e->type == FY_DT_F32) {
        t->emb[slot] = (fy_nn_embedding){.f32 = e->data};
        return 0;
    }
    if (e->type != FY_DT_INTGEMM8)
        return fy_err(err, FY_EUNSUPPORTED, "%s: tensor %s has type %s", t->b->files.model, name,
                      fy_dtype_name(e->type));
    t->emb[slot] = (fy_nn_embedding){.i8 = e->data, .inv = 1.0f / e->quant_mult};
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

static int open_network(fy_translator *t, fy_error *err)
{
    const fy_model_config *c = t->cfg;
    int d = c->dim_emb;
    const char *src_name = c->separate_embeddings ? "encoder_Wemb" : "Wemb";
    const char *trg_name = c->separate_embeddings ? "decoder_Wemb" : "Wemb";
    if (bind_embedding(t, src_name, t->src_vocab, 0, err) < 0) return err->code;
    t->trg_slot = c->separate_embeddings ? 1 : 0;
    if (c->separate_embeddings && bind_embedding(t, trg_name, t->trg_vocab, 1, err) < 0)
        return err->code;
    t->emb_scale = sqrtf((float)d);

    /* Positions: source tokens 0..127 and decoder steps 0..max_out-1. */
    t->max_out = (int)ceilf(t->opt.max_length_factor * (float)FY_SEGMENT_TOKENS);
    if (t->max_out < 1) t->max_out = 1;
    t->npos = t->max_out > FY_SEGMENT_TOKENS ? t->max_out : FY_SEGMENT_TOKENS;
    t->pos = malloc((size_t)t->npos * d * sizeof *t->pos);
    if (!t->pos) return fy_err(err, FY_ENOMEM, "out of memory for the position table");
    fy_positional_fill(t->pos, t->npos, d, 0);

    t->enc = fy_encoder_bind(t->b->model, d, c->dim_ffn, c->enc_depth, c->heads, err);
    if (!t->enc) return err->code;
    t->dec = fy_decoder_bind(t->b->model, d, c->dim_ffn, c->dec_depth, c->heads, c->int8,
                             &t->emb[t->trg_slot], t->trg_vocab, err);
    if (!t->dec) return err->code;
    return 0;
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
    fy_encoder_free(t->enc);
    fy_decoder_free(t->dec);
    free(t->pos);
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
/* Workers: one arena per thread, carved once                                */
/* ------------------------------------------------------------------------ */

typedef struct fy_arena {
    char *base; /* NULL while sizing */
    size_t used;
} fy_arena;

static void *carve(fy_arena *a, size_t bytes)
{
    size_t off = (a->used + 63) & ~(size_t)63;
    a->used = off + bytes;
    return a->base ? a->base + off : NULL;
}

/* Lays the worker's buffers out in a (sizes only while a->base is NULL). */
static void worker_layout(fy_worker *w, fy_arena *a)
{
    const fy_translator *t = w->t;
    size_t d = (size_t)t->cfg->dim_emb, dffn = (size_t)t->cfg->dim_ffn;
    size_t T = (size_t)w->max_tokens, B = (size_t)w->max_rows, V = (size_t)t->trg_vocab;
    size_t depth = (size_t)t->cfg->dec_depth, f = sizeof(float);

    w->ids = carve(a, T * sizeof(int32_t));
    w->off = carve(a, B * sizeof(int));
    w->len = carve(a, B * sizeof(int));
    w->x = carve(a, T * d * f);
    w->enc.q = carve(a, T * d * f); /* also fy_decoder_prepare's tmp */
    w->enc.hidden = carve(a, FY_NN_FFN_BLOCK * dffn * f);
    w->enc.out = carve(a, FY_NN_FFN_BLOCK * d * f);
    w->enc.scores = carve(a, FY_SEGMENT_TOKENS * f);
    /* The cross-attention keys and values are written only after the
     * encoder has finished, from x and enc.q: until then their planes hold
     * the encoder's other scratch (12 MB less per worker for base-memory). */
    size_t planes = 2 * depth < 4 ? 4 : 2 * depth;
    float *kv = carve(a, planes * T * d * f);
    w->keys = kv;
    w->values = a->base ? kv + depth * T * d : NULL;
    w->enc.k = kv;
    w->enc.v = a->base ? kv + T * d : NULL;
    w->enc.ctx = a->base ? kv + 2 * T * d : NULL;
    w->enc.kt = a->base ? kv + 3 * T * d : NULL;
    w->state = carve(a, depth * B * d * f);
    w->dx = carve(a, B * d * f);
    w->dec.xw = carve(a, B * d * f);
    w->dec.f = carve(a, B * d * f);
    w->dec.q = carve(a, B * d * f);
    w->dec.ctx = carve(a, B * d * f);
    w->dec.o = carve(a, B * d * f);
    w->dec.hidden = carve(a, B * dffn * f);
    w->dec.scores = carve(a, FY_SEGMENT_TOKENS * f);
    w->logits = carve(a, B * V * f);
    w->rows = carve(a, B * sizeof(fy_row));
    w->row_off = carve(a, B * sizeof(int));
    w->row_len = carve(a, B * sizeof(int));
    w->done = carve(a, B);
    if (t->opt.max_beam > 1) {
        fy_beam_scratch *bs = &w->beam;
        bs->state2 = carve(a, depth * B * d * f);
        bs->score = carve(a, B * f);
        bs->node = carve(a, B * sizeof(int));
        bs->next = carve(a, B * sizeof(fy_row));
        bs->next_score = carve(a, B * f);
        bs->next_node = carve(a, B * sizeof(int));
        bs->parent = carve(a, B * sizeof(int));
        bs->first = carve(a, B * sizeof(int));
        bs->count = carve(a, B * sizeof(int));
        bs->width = carve(a, B * sizeof(int));
    }
    w->bitmap_bytes = (V + 7) / 8;
    if (t->shortlist) {
        w->cols = carve(a, B * V * sizeof(int32_t));
        w->ncols = carve(a, B * sizeof(int));
        w->allowed = carve(a, B * w->bitmap_bytes);
        w->sl_out = carve(a, V * sizeof(int32_t));
        w->sl_seen = carve(a, fy_shortlist_scratch_bytes(t->shortlist, t->trg_vocab));
    }
    size_t lin = fy_encoder_linear_scratch(t->enc, w->max_tokens);
    size_t dl = fy_decoder_linear_scratch(t->dec, w->max_rows);
    size_t proj = fy_decoder_linear_scratch(t->dec, w->max_tokens);
    if (dl > lin) lin = dl;
    if (proj > lin) lin = proj;
    w->lin = carve(a, lin);
    w->enc.lin = w->lin;
    w->dec.lin = w->lin;
}

/* Decoder rows of a worker: a batch's segments, or one segment's beam. */
static int worker_rows(const fy_translator *t)
{
    int b = t->opt.max_batch_sentences;
    return b > t->opt.max_beam ? b : t->opt.max_beam;
}

size_t fy_translator_worker_bytes(const fy_translator *t)
{
    fy_worker w = {.t = t, .max_tokens = t->opt.max_batch_tokens, .max_rows = worker_rows(t)};
    fy_arena a = {NULL, 0};
    worker_layout(&w, &a);
    return (a.used + 63) & ~(size_t)63;
}

size_t fy_translator_heap_bytes(const fy_translator *t)
{
    size_t d = (size_t)t->cfg->dim_emb, table = (size_t)t->npos * d * sizeof(float);
    size_t vocabs = fy_spm_memory_bytes(t->src_spm);
    if (t->trg_spm != t->src_spm) vocabs += fy_spm_memory_bytes(t->trg_spm);
    /* int8 weights are read in place, the output layer too unless it had
     * to be requantised. Float weights are repacked into panels: about the
     * file again. */
    if (t->cfg->int8) return table + vocabs + fy_decoder_output_bytes(t->dec);
    return table + vocabs + (size_t)t->b->model_bytes;
}

fy_worker *fy_worker_new(const fy_translator *t, fy_error *err)
{
    fy_worker *w = calloc(1, sizeof *w);
    if (!w) goto oom;
    w->t = t;
    w->max_tokens = t->opt.max_batch_tokens;
    w->max_rows = worker_rows(t);
    fy_arena a = {NULL, 0};
    worker_layout(w, &a);
    /* Whole pages, so that fy_worker_trim can give them back. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    w->arena_bytes = (a.used + page - 1) / page * page;
    w->arena = aligned_alloc(page, w->arena_bytes);
    if (!w->arena) goto oom;
    a = (fy_arena){w->arena, 0};
    worker_layout(w, &a);
    return w;
oom:
    fy_err(err, FY_ENOMEM, "out of memory for a translation worker");
    fy_worker_free(w);
    return NULL;
}

void fy_worker_free(fy_worker *w)
{
    if (!w) return;
    free(w->arena);
    free(w);
}

void fy_worker_trim(fy_worker *w)
{
    /* Nothing in the arena outlives a call: its pages come back zeroed. */
    if (w && w->arena) madvise(w->arena, w->arena_bytes, MADV_DONTNEED);
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

/* Fills slot r's bitmap and ascending id list with its sentence's shortlist
 * (the sentence's pieces and EOS, as the reference generates it for a
 * one-sentence batch). Ascending, like the reference's sorted list, so that
 * pick() meets ties in the same order. */
int fy_tr_shortlist_row(const fy_translator *t, fy_worker *w, const fy_sentence *s, int r,
                        fy_error *err)
{
    long n =
        fy_shortlist_select_ex(t->shortlist, s->ids, (size_t)s->npieces + 1, t->trg_vocab,
                               t->shared_vocab, w->sl_out, (size_t)t->trg_vocab, w->sl_seen, err);
    if (n < 0) return (int)n;
    uint8_t *bits = w->allowed + (size_t)r * w->bitmap_bytes;
    memset(bits, 0, w->bitmap_bytes);
    for (long i = 0; i < n; i++) bits[w->sl_out[i] >> 3] |= (uint8_t)(1u << (w->sl_out[i] & 7));
    int32_t *cols = w->cols + (size_t)r * t->trg_vocab;
    int nc = 0;
    for (int id = 0; id < t->trg_vocab; id++)
        if (bits[id >> 3] & (1u << (id & 7))) cols[nc++] = id;
    w->ncols[r] = nc;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Greedy decoding of one sub-batch                                          */
/* ------------------------------------------------------------------------ */

/* fy_nn_embed from embedding slot 0 (source) or 1 (target, = 0 when tied):
 * int8 rows are dequantised as they are used, (float)q·inv, the floats the
 * reference's dequantised matrix holds. */
static void embed(const fy_translator *t, int slot, float *x, const int32_t *ids, int rows,
                  const float *pos, int pos_stride)
{
    int d = t->cfg->dim_emb;
    const int8_t *q = t->emb[slot].i8;
    if (!q) {
        fy_nn_embed(x, t->emb[slot].f32, ids, rows, d, t->emb_scale, pos, pos_stride);
        return;
    }
    float inv = t->emb[slot].inv, scale = t->emb_scale;
    for (int r = 0; r < rows; r++) {
        float *xr = x + (size_t)r * d;
        const float *pr = pos + (size_t)r * pos_stride;
        if (!ids) {
            for (int i = 0; i < d; i++) xr[i] = 0.0f * scale + pr[i];
            continue;
        }
        const int8_t *qr = q + (size_t)ids[r] * d;
        for (int i = 0; i < d; i++) {
            float e = (float)qr[i] * inv;
            xr[i] = e * scale + pr[i];
        }
    }
}

void fy_tr_embed_row(const fy_translator *t, fy_worker *w, int r, int step)
{
    size_t d = (size_t)t->cfg->dim_emb;
    const fy_row *row = &w->rows[r];
    embed(t, t->trg_slot, w->dx + r * d, row->last < 0 ? NULL : &row->last, 1,
          t->pos + (size_t)step * d, 0);
}

/* Marian's History: (path - word-penalty·L) / L^normalize, in float. */
float fy_tr_normalise(const fy_translator *t, float path, int len)
{
    if (len < 1) return path; /* nothing was decoded: nothing to divide */
    float l = (float)len;
    float lp = t->opt.length_norm == 1.0f ? l : powf(l, t->opt.length_norm);
    return (path - t->opt.word_penalty * l) / lp;
}

int fy_tr_encode_rows(const fy_translator *t, fy_worker *w, const fy_sentence *sent,
                      const fy_segment *segs, const int *idx, int ns)
{
    int d = t->cfg->dim_emb, ntok = 0;
    for (int r = 0; r < ns; r++) {
        const fy_segment *g = &segs[idx[r]];
        w->off[r] = ntok;
        w->len[r] = g->npieces + 1;
        memcpy(w->ids + ntok, sent[g->sent].ids + g->first, (size_t)g->npieces * sizeof(int32_t));
        w->ids[ntok + g->npieces] = t->src_eos;
        embed(t, 0, w->x + (size_t)ntok * d, w->ids + ntok, w->len[r], t->pos, d);
        ntok += w->len[r];
    }
    fy_encoder_forward(t->enc, w->x, ntok, w->off, w->len, ns, &w->enc);
    fy_decoder_prepare(t->dec, w->x, ntok, w->off, w->len, ns, w->keys, w->values, w->enc.q,
                       w->lin);
    return ntok;
}

/* The best allowed column of one row of logits (first one on ties, as the
 * reference's partial_sort), never <unk>; *value = its logit, *gap = best -
 * second best. */
static int32_t pick(const fy_translator *t, const float *lg, const int32_t *cols, int ncols,
                    const uint8_t *bits, float *value, float *gap)
{
    int32_t best = -1;
    float b1 = -INFINITY, b2 = -INFINITY;
    for (int c = 0; c < ncols; c++) {
        int32_t id = cols ? cols[c] : c;
        if (id == t->trg_unk) continue;
        if (bits && !(bits[id >> 3] & (1u << (id & 7)))) continue;
        float v = lg[c];
        if (v > b1) {
            b2 = b1;
            b1 = v;
            best = id;
        } else if (v > b2) {
            b2 = v;
        }
    }
    *value = b1;
    *gap = b1 - b2;
    return best;
}

/* Drops finished rows (done[r] != 0), keeping the others in order together
 * with their SSRU cells. Returns the new row count. */
static int compact_rows(const fy_translator *t, fy_worker *w, int rows, const uint8_t *done)
{
    int d = t->cfg->dim_emb, depth = t->cfg->dec_depth, j = 0;
    for (int r = 0; r < rows; r++) {
        if (done[r]) continue;
        if (j != r) {
            w->rows[j] = w->rows[r];
            w->row_off[j] = w->row_off[r];
            w->row_len[j] = w->row_len[r];
            for (int l = 0; l < depth; l++) {
                float *plane = w->state + (size_t)l * w->max_rows * d;
                memcpy(plane + (size_t)j * d, plane + (size_t)r * d, (size_t)d * sizeof(float));
            }
        }
        j++;
    }
    return j;
}

/* Scores every row: on its own shortlist (one row at a time), else on the
 * whole vocabulary (all rows at once). Row r's logits start at r·V. */
void fy_tr_score_rows(const fy_translator *t, fy_worker *w, int rows)
{
    size_t d = (size_t)t->cfg->dim_emb, V = (size_t)t->trg_vocab;
    if (!t->shortlist) {
        fy_decoder_logits(t->dec, w->dx, rows, NULL, t->trg_vocab, w->lin, w->logits);
        return;
    }
    for (int r = 0; r < rows; r++) {
        int slot = w->rows[r].slot;
        fy_decoder_logits(t->dec, w->dx + r * d, 1, w->cols + slot * V, w->ncols[slot], w->lin,
                          w->logits + r * V);
    }
}

/* Chooses each row's next token and records it; marks finished rows. */
static void choose_tokens(const fy_translator *t, fy_worker *w, fy_sentence *sent, fy_segment *segs,
                          int rows, int step, uint8_t *done)
{
    size_t V = (size_t)t->trg_vocab;
    for (int r = 0; r < rows; r++) {
        fy_row *row = &w->rows[r];
        fy_segment *g = &segs[row->seg];
        const uint8_t *bits = NULL;
        const int32_t *cols = NULL;
        int ncols = t->trg_vocab;
        if (t->shortlist) {
            bits = w->allowed + (size_t)row->slot * w->bitmap_bytes;
            cols = w->cols + row->slot * V;
            ncols = w->ncols[row->slot];
        }
        float value, gap;
        int32_t tok = pick(t, w->logits + r * V, cols, ncols, bits, &value, &gap);
        if (gap < sent[g->sent].gap) sent[g->sent].gap = gap;
        done[r] = 0;
        if (tok >= 0) g->path += value; /* the reference's path score, for n-best lists */
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

int fy_tr_step_rows(const fy_translator *t, fy_worker *w, int rows, int ntok, int step,
                    fy_error *err)
{
    if (fy_tr_aborted(w, err)) return FY_ECANCELED;
    for (int r = 0; r < rows; r++) fy_tr_embed_row(t, w, r, step);
    fy_decoder_rows dr = {
        .rows = rows,
        .src_off = w->row_off,
        .src_len = w->row_len,
        .keys = w->keys,
        .values = w->values,
        .ntok = ntok,
        .state = w->state,
        .state_stride = w->max_rows,
    };
    fy_decoder_step(t->dec, w->dx, &dr, &w->dec);
    fy_tr_score_rows(t, w, rows);
    return 0;
}

/* Translates segments idx[0..ns) into their out buffers. */
static int decode_rows(const fy_translator *t, fy_worker *w, fy_sentence *sent, fy_segment *segs,
                       const int *idx, int ns, fy_error *err)
{
    int d = t->cfg->dim_emb, depth = t->cfg->dec_depth;
    int ntok = fy_tr_encode_rows(t, w, sent, segs, idx, ns);
    if (t->shortlist) {
        for (int r = 0; r < ns; r++) {
            int rc = fy_tr_shortlist_row(t, w, &sent[segs[idx[r]].sent], r, err);
            if (rc < 0) return rc;
        }
    }
    for (int l = 0; l < depth; l++)
        memset(w->state + (size_t)l * w->max_rows * d, 0, (size_t)ns * d * sizeof(float));
    for (int r = 0; r < ns; r++) {
        w->rows[r] = (fy_row){.seg = idx[r], .slot = r, .last = -1};
        w->row_off[r] = w->off[r];
        w->row_len[r] = w->len[r];
    }
    int rows = ns;
    for (int step = 0; rows > 0; step++) {
        if (fy_tr_step_rows(t, w, rows, ntok, step, err)) return FY_ECANCELED;
        choose_tokens(t, w, sent, segs, rows, step, w->done);
        rows = compact_rows(t, w, rows, w->done);
    }
    return 0;
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
    if ((rc = decode_all(t, w, sent, segs, nseg, buf.order, beam, err)) < 0) goto done;
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

static void *engine_worker_new(void *ctx, fy_error *err)
{
    return fy_worker_new(ctx, err);
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
