/* decoder.c - the SSRU decoder, read top to bottom: weights (bind/free),
 * the per-batch cross-attention projection, one decoding step, logits. */
#include "nn/decoder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "nn/ops.h"

/* ------------------------------------------------------------------------ */
/* Weights                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct fy_decoder_layer {
    fy_linear *rnn_w;  /* decoder_l<i>_rnn_W  [d][d], no bias: SSRU candidate x·W */
    fy_linear *rnn_wf; /* decoder_l<i>_rnn_Wf [d][d] + rnn_bf [d]: forget gate */
    fy_nn_norm rnn_ln; /* decoder_l<i>_rnn_ffn_ln_{scale,bias} [d] */
    fy_nn_attn ctx;    /* decoder_l<i>_context_*: cross-attention */
    fy_nn_ffn ffn;     /* decoder_l<i>_ffn_* */
} fy_decoder_layer;

struct fy_decoder {
    int d, dffn, depth, heads, vocab;
    fy_decoder_layer *layers; /* [depth] */
    fy_linear *out;           /* tied output layer: Wembᵀ [d][vocab] + decoder_ff_logit_out_b */
    int8_t *out_w8;           /* int8 models: its weights, which out views */
};

/* The products every step runs: one sentence's steps at one row, where the
 * one-row layout reads their weights fastest (the cross-attention's keys
 * and values run once a sentence, over all its tokens). */
enum { STEP_LAYERS = 6 };
static void step_layers(const fy_decoder_layer *l, fy_linear *out[STEP_LAYERS])
{
    fy_linear *all[STEP_LAYERS] = {l->rnn_w, l->rnn_wf, l->ctx.wq, l->ctx.wo, l->ffn.w1, l->ffn.w2};
    memcpy(out, all, sizeof all);
}

static int bind_layer(const fy_marian *m, int i, int d, int dffn, fy_decoder_layer *l,
                      fy_error *err)
{
    char w[64], b[64];
    snprintf(w, sizeof w, "decoder_l%d_rnn_W", i);
    if (!(l->rnn_w = fy_nn_bind_linear(m, w, NULL, d, d, err))) return err->code;
    snprintf(w, sizeof w, "decoder_l%d_rnn_Wf", i);
    snprintf(b, sizeof b, "decoder_l%d_rnn_bf", i);
    if (!(l->rnn_wf = fy_nn_bind_linear(m, w, b, d, d, err))) return err->code;
    snprintf(w, sizeof w, "decoder_l%d_rnn_ffn", i);
    if (fy_nn_norm_bind(m, w, d, &l->rnn_ln, err) < 0) return err->code;
    snprintf(w, sizeof w, "decoder_l%d_context", i);
    if (fy_nn_attn_bind(m, w, d, &l->ctx, err) < 0) return err->code;
    snprintf(w, sizeof w, "decoder_l%d_ffn", i);
    if (fy_nn_ffn_bind(m, w, d, dffn, &l->ffn, err) < 0) return err->code;
    fy_linear *step[STEP_LAYERS];
    step_layers(l, step);
    for (int j = 0; j < STEP_LAYERS; j++)
        if (fy_linear_prepare_one_row(step[j], err) < 0) return err->code;
    return 0;
}

/* The smallest and largest of count int8 values. */
static void i8_range(const int8_t *v8, size_t count, int *lo_out, int *hi_out)
{
    typedef int8_t v16b __attribute__((vector_size(16)));
    v16b lo = {0}, hi = {0};
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        v16b v;
        memcpy(&v, v8 + i, sizeof v);
        v16b less = v<lo, more = v> hi;
        lo = (less & v) | (~less & lo);
        hi = (more & v) | (~more & hi);
    }
    int mn = 0, mx = 0;
    for (int l = 0; l < 16; l++) {
        mn = lo[l] < mn ? lo[l] : mn;
        mx = hi[l] > mx ? hi[l] : mx;
    }
    for (; i < count; i++) {
        mn = v8[i] < mn ? v8[i] : mn;
        mx = v8[i] > mx ? v8[i] : mx;
    }
    *lo_out = mn;
    *hi_out = mx;
}

/* The int8 output layer from int8 embeddings without their float copy:
 * max|(float)q·inv| is (float)max|q|·inv (scaling by a positive float is
 * monotonic and symmetric), and each output byte depends only on its input
 * byte, so a 256-entry table gives exactly what quantising the floats with
 * fy_i8_quantize gives: table[v + 128] and its scale. Returns 1 when every
 * byte e holds keeps its value (max|q| = 127, as intgemm's own
 * quantisation leaves it): then e's bytes are the output layer's as they are. */
static int requant_table(const fy_nn_embedding *e, size_t count, int8_t table[256], float *mult)
{
    int mn, mx;
    i8_range(e->i8, count, &mn, &mx);
    int maxabs = -mn > mx ? -mn : mx;
    float fmax = (float)maxabs * e->inv;
    *mult = fmax > 0.0f ? 127.0f / fmax : 1.0f;
    int same = 1;
    for (int v = -128; v < 128; v++) {
        float f = (float)v * e->inv;
        fy_i8_quantize(&f, 1, *mult, &table[v + 128]);
        if (v >= mn && v <= mx) same &= table[v + 128] == v;
    }
    return same;
}

static void requant_apply(const fy_nn_embedding *e, size_t count, const int8_t table[256],
                          int8_t *q)
{
    for (size_t i = 0; i < count; i++) q[i] = table[e->i8[i] + 128];
}

int fy_decoder_requantize_i8(const fy_nn_embedding *e, size_t count, int8_t *q, float *mult)
{
    int8_t table[256];
    int same = requant_table(e, count, table, mult);
    if (!q) return same;
    if (same)
        memcpy(q, e->i8, count);
    else
        requant_apply(e, count, table, q);
    return same;
}

size_t fy_decoder_output_bytes(const fy_decoder *dec)
{
    return dec && dec->out_w8 ? (size_t)dec->vocab * (size_t)dec->d : 0;
}

size_t fy_decoder_one_row_bytes(const fy_decoder *dec)
{
    size_t n = 0;
    for (int i = 0; dec && i < dec->depth; i++) {
        fy_linear *step[STEP_LAYERS];
        step_layers(&dec->layers[i], step);
        for (int j = 0; j < STEP_LAYERS; j++) n += fy_linear_one_row_bytes(step[j]);
    }
    return n;
}

/* The float values of int8 embeddings (a float model tied to int8
 * embeddings: unusual, but valid). */
static float *dequantize(const fy_nn_embedding *e, size_t count)
{
    float *f = malloc(count * sizeof *f);
    if (f)
        for (size_t i = 0; i < count; i++) f[i] = (float)e->i8[i] * e->inv;
    return f;
}

/* The name of the tensor whose data emb views: the output layer's weights.
 * Marian names the output GEMM's B after it (a shortlist's column selection
 * keeps the name), so its activation scale is that name + "_QuantMultA". */
static const char *tied_tensor(const fy_marian *m, const fy_nn_embedding *emb)
{
    static const char *const names[] = {"Wemb", "decoder_Wemb"};
    const void *data = emb->i8 ? (const void *)emb->i8 : (const void *)emb->f32;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const fy_tensor *t = fy_marian_find(m, names[i]);
        if (t && t->data == data) return names[i];
    }
    return NULL;
}

/* The output layer tied to the target embeddings [vocab][d]. */
static fy_linear *bind_output(const fy_marian *m, int d, int int8, const fy_nn_embedding *emb,
                              int vocab, int8_t **w8, fy_error *err)
{
    const float *bias = fy_nn_bind_floats(m, "decoder_ff_logit_out_b", (size_t)vocab, err);
    if (!bias) return NULL;
    size_t count = (size_t)vocab * d;
    fy_linear *l = NULL;
    if (int8) {
        /* The reference prepares the float matrix like any float weight:
         * quantised with 127/max|W|, rows [vocab][d] = [n][k] as gemm.h wants.
         * Its activation scale is Wemb_QuantMultA or decoder_Wemb_QuantMultA
         * (with or without a shortlist; none_QuantMultA is never read), an
         * intgemm8 scalar in Mozilla's files: see fy_model_read_scalar. */
        const char *tied = tied_tensor(m, emb);
        if (!tied) {
            fy_err(err, FY_EINVAL,
                   "%s: output layer: the target embeddings are not Wemb or "
                   "decoder_Wemb of this file",
                   fy_marian_path(m));
            return NULL;
        }
        char name[32];
        float alpha;
        snprintf(name, sizeof name, "%s_QuantMultA", tied);
        if (fy_model_read_scalar(m, name, &alpha, err)) return NULL;
        float mult;
        int8_t table[256];
        /* Embeddings intgemm quantised keep their bytes: the layer views
         * them in the mapped file (32 MB less for a 64000 x 512 vocabulary). */
        if (emb->i8 && requant_table(emb, count, table, &mult)) {
            l = fy_linear_view_i8(emb->i8, vocab, d, mult, alpha, bias, err);
            if (!l) fy_err_prefix(err, "%s: output layer", fy_marian_path(m));
            return l;
        }
        /* Otherwise the decoder keeps the requantised bytes; the layer views them. */
        int8_t *q = aligned_alloc(64, (count + 63) / 64 * 64);
        if (!q) goto oom;
        if (emb->i8) {
            requant_apply(emb, count, table, q);
        } else {
            mult = fy_i8_weight_mult(emb->f32, count);
            fy_i8_quantize(emb->f32, count, mult, q);
        }
        l = fy_linear_view_i8(q, vocab, d, mult, alpha, bias, err);
        if (l)
            *w8 = q;
        else
            free(q);
    } else if (emb->i8) {
        float *f = dequantize(emb, count);
        if (!f) goto oom;
        l = fy_linear_new_f32_nk(f, vocab, d, bias, err);
        free(f);
    } else {
        l = fy_linear_new_f32_nk(emb->f32, vocab, d, bias, err);
    }
    if (!l) fy_err_prefix(err, "%s: output layer", fy_marian_path(m));
    return l;
oom:
    fy_err(err, FY_ENOMEM, "out of memory preparing the output layer");
    return NULL;
}

fy_decoder *fy_decoder_bind(const fy_marian *m, int d, int dffn, int depth, int heads, int int8,
                            const fy_nn_embedding *emb, int vocab, fy_error *err)
{
    fy_error local;
    if (!err) err = &local;
    fy_decoder *dec = calloc(1, sizeof *dec);
    if (!dec) goto oom;
    dec->d = d;
    dec->dffn = dffn;
    dec->depth = depth;
    dec->heads = heads;
    dec->vocab = vocab;
    dec->layers = calloc((size_t)depth, sizeof *dec->layers);
    if (!dec->layers) goto oom;
    for (int i = 0; i < depth; i++)
        if (bind_layer(m, i + 1, d, dffn, &dec->layers[i], err) < 0) goto fail;
    if (!(dec->out = bind_output(m, d, int8, emb, vocab, &dec->out_w8, err))) goto fail;
    return dec;
oom:
    fy_err(err, FY_ENOMEM, "out of memory binding the decoder");
fail:
    fy_decoder_free(dec);
    return NULL;
}

void fy_decoder_free(fy_decoder *dec)
{
    if (!dec) return;
    for (int i = 0; dec->layers && i < dec->depth; i++) {
        fy_decoder_layer *l = &dec->layers[i];
        fy_linear_free(l->rnn_w);
        fy_linear_free(l->rnn_wf);
        fy_nn_attn_free(&l->ctx);
        fy_nn_ffn_free(&l->ffn);
    }
    free(dec->layers);
    fy_linear_free(dec->out);
    free(dec->out_w8);
    free(dec);
}

void fy_decoder_layer_get(const fy_decoder *dec, int i, fy_decoder_layer_view *out)
{
    const fy_decoder_layer *l = &dec->layers[i];
    *out = (fy_decoder_layer_view){l->rnn_w, l->rnn_wf, &l->rnn_ln, &l->ctx, &l->ffn};
}

const fy_linear *fy_decoder_output(const fy_decoder *dec)
{
    return dec->out;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

size_t fy_decoder_linear_scratch(const fy_decoder *dec, int rows)
{
    size_t n = fy_linear_scratch_bytes(dec->out, rows);
    for (int i = 0; i < dec->depth; i++) {
        const fy_decoder_layer *l = &dec->layers[i];
        fy_linear *all[] = {l->rnn_w,  l->rnn_wf, l->ctx.wq, l->ctx.wk,
                            l->ctx.wv, l->ctx.wo, l->ffn.w1, l->ffn.w2};
        for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
            n = max_size(n, fy_linear_scratch_bytes(all[j], rows));
        const fy_linear *rnn[] = {l->rnn_w, l->rnn_wf}, *kv[] = {l->ctx.wk, l->ctx.wv};
        n = max_size(n, fy_linear_set_scratch_bytes(rnn, 2, rows));
        n = max_size(n, fy_linear_set_scratch_bytes(kv, 2, rows));
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Forward                                                                   */
/* ------------------------------------------------------------------------ */

void fy_decoder_prepare(const fy_decoder *dec, const float *ctx, int ntok, const int *off,
                        const int *len, int nsent, float *keys, float *values, float *tmp,
                        void *lin_scratch)
{
    int d = dec->d;
    size_t plane = (size_t)ntok * d;
    for (int i = 0; i < dec->depth; i++) {
        const fy_linear *kv[] = {dec->layers[i].ctx.wk, dec->layers[i].ctx.wv};
        float *out[] = {tmp, values + i * plane};
        fy_linear_forward_set(kv, 2, ctx, ntok, lin_scratch, out);
        for (int s = 0; s < nsent; s++) {
            size_t o = (size_t)off[s] * d;
            fy_transpose(tmp + o, len[s], d, keys + i * plane + o);
        }
    }
}

/* SSRU: c = σ(f)⊙c + (1−σ(f))⊙(x·W), then x = LN(relu(c) + x). Marian's
 * highway op computes s·c + (1 − s)·xw exactly in this order. d is a
 * multiple of 4 (the heads split it into even halves of 8). */
static void ssru(const fy_decoder *dec, const fy_decoder_layer *l, float *x, int rows, float *cell,
                 const fy_decoder_scratch *s)
{
    int d = dec->d;
    const fy_linear *rnn[] = {l->rnn_w, l->rnn_wf};
    float *out[] = {s->xw, s->f};
    fy_linear_forward_set(rnn, 2, x, rows, s->lin, out);
    fy_ssru_cell(cell, s->f, s->xw, s->o, (size_t)rows * d);
    fy_nn_add_norm(x, s->o, rows, d, &l->rnn_ln);
}

/* Cross-attention of every row over its own sentence's encoder context. */
static void cross_attention(const fy_decoder *dec, const fy_decoder_layer *l, int layer, float *x,
                            const fy_decoder_rows *r, const fy_decoder_scratch *s)
{
    int d = dec->d;
    size_t plane = (size_t)r->ntok * d;
    const float *keys = r->keys + layer * plane;
    const float *values = r->values + layer * plane;
    fy_linear_forward(l->ctx.wq, x, r->rows, NULL, 0, s->lin, s->q);
    for (int i = 0; i < r->rows; i++) {
        size_t o = (size_t)r->src_off[i] * d;
        fy_nn_attend(s->q + (size_t)i * d, 1, d, keys + o, r->src_len[i], values + o, d,
                     r->src_len[i], dec->heads, d, s->scores, s->ctx + (size_t)i * d, d);
    }
    fy_linear_forward(l->ctx.wo, s->ctx, r->rows, NULL, 0, s->lin, s->o);
    fy_nn_add_norm(x, s->o, r->rows, d, &l->ctx.ln);
}

void fy_decoder_step(const fy_decoder *dec, float *x, const fy_decoder_rows *r,
                     const fy_decoder_scratch *s)
{
    for (int i = 0; i < dec->depth; i++) {
        const fy_decoder_layer *l = &dec->layers[i];
        float *cell = r->state + (size_t)i * r->state_stride * dec->d;
        ssru(dec, l, x, r->rows, cell, s);
        cross_attention(dec, l, i, x, r, s);
        fy_nn_ffn_forward(&l->ffn, x, r->rows, dec->d, r->rows, s->hidden, s->o, s->lin);
    }
}

void fy_decoder_logits(const fy_decoder *dec, const float *x, int rows, const int32_t *cols,
                       int ncols, void *lin_scratch, float *logits)
{
    fy_linear_forward(dec->out, x, rows, cols, cols ? ncols : dec->vocab, lin_scratch, logits);
}

void fy_decoder_logits_ex(const fy_decoder *dec, const float *x, int rows, const int32_t *cols,
                          int ncols, void *lin_scratch, float *logits, int ld)
{
    fy_linear_forward_ex(dec->out, x, rows, cols, cols ? ncols : dec->vocab, lin_scratch, logits,
                         ld);
}
