/* encoder.c - the transformer encoder, read top to bottom:
 * weights (bind/free), then the forward pass (embed, layers). */
#include "nn/encoder.h"

#include <stdio.h>
#include <stdlib.h>

#include "nn/ops.h"
#include "nn/par.h"

/* ------------------------------------------------------------------------ */
/* Weights                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct fy_encoder_layer {
    fy_nn_attn self; /* encoder_l<i>_self_*: Wq/Wk/Wv/Wo [d][d], b* [d], Wo_ln_* [d] */
    fy_nn_ffn ffn;   /* encoder_l<i>_ffn_*: W1 [d][dffn], W2 [dffn][d], ffn_ln_* [d] */
} fy_encoder_layer;

struct fy_encoder {
    int d, dffn, depth, heads;
    fy_encoder_layer *layers; /* [depth] */
};

fy_encoder *fy_encoder_bind(const fy_marian *m, int d, int dffn, int depth, int heads,
                            fy_error *err)
{
    fy_encoder *e = calloc(1, sizeof *e);
    if (!e) goto oom;
    e->d = d;
    e->dffn = dffn;
    e->depth = depth;
    e->heads = heads;
    e->layers = calloc((size_t)depth, sizeof *e->layers);
    if (!e->layers) goto oom;
    for (int i = 0; i < depth; i++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "encoder_l%d_self", i + 1);
        if (fy_nn_attn_bind(m, prefix, d, &e->layers[i].self, err) < 0) goto fail;
        snprintf(prefix, sizeof prefix, "encoder_l%d_ffn", i + 1);
        if (fy_nn_ffn_bind(m, prefix, d, dffn, &e->layers[i].ffn, err) < 0) goto fail;
    }
    return e;
oom:
    fy_err(err, FY_ENOMEM, "out of memory binding the encoder");
fail:
    fy_encoder_free(e);
    return NULL;
}

void fy_encoder_free(fy_encoder *e)
{
    if (!e) return;
    for (int i = 0; e->layers && i < e->depth; i++) {
        fy_nn_attn_free(&e->layers[i].self);
        fy_nn_ffn_free(&e->layers[i].ffn);
    }
    free(e->layers);
    free(e);
}

const fy_nn_attn *fy_encoder_self(const fy_encoder *e, int i)
{
    return &e->layers[i].self;
}

const fy_nn_ffn *fy_encoder_ffn(const fy_encoder *e, int i)
{
    return &e->layers[i].ffn;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

size_t fy_encoder_linear_scratch(const fy_encoder *e, int rows)
{
    size_t n = 0;
    int block = rows < FY_NN_FFN_BLOCK ? rows : FY_NN_FFN_BLOCK;
    for (int i = 0; i < e->depth; i++) {
        const fy_encoder_layer *l = &e->layers[i];
        const fy_linear *qkv[] = {l->self.wq, l->self.wk, l->self.wv};
        n = max_size(n, fy_linear_set_scratch_bytes(qkv, 3, rows));
        n = max_size(n, fy_linear_scratch_bytes(l->self.wo, rows));
        n = max_size(n, fy_linear_scratch_bytes(l->ffn.w1, block));
        n = max_size(n, fy_linear_scratch_bytes(l->ffn.w2, block));
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Forward                                                                   */
/* ------------------------------------------------------------------------ */

void fy_nn_embed(float *x, const float *table, const int32_t *ids, int rows, int d, float scale,
                 const float *pos, int pos_stride)
{
    for (int r = 0; r < rows; r++) {
        float *xr = x + (size_t)r * d;
        const float *pr = pos + (size_t)r * pos_stride;
        if (ids) {
            const float *er = table + (size_t)ids[r] * d;
            for (int i = 0; i < d; i++) xr[i] = er[i] * scale + pr[i];
        } else {
            /* Marian scales the zero start embedding too: 0·scale + pos. */
            for (int i = 0; i < d; i++) xr[i] = 0.0f * scale + pr[i];
        }
    }
}

/* Attention smaller than this (the sum over sentences of len²·d) stays on
 * the calling thread: a hand-off to a helper costs about a microsecond. */
#define ATTEND_PAR_MIN (64 * 1024)

/* The heads of a batch's sentences, an item each (sentence i's head h is
 * item i·heads + h), for fy_par_for. */
typedef struct heads_job {
    const fy_encoder *e;
    const fy_encoder_scratch *s;
    const int *off, *len;
} heads_job;

/* One head of one sentence: its keys transposed into the head's [dk][len]
 * block of the sentence's kt (so that scores vectorise across keys and
 * read contiguous memory), then attended into its columns of ctx, with a
 * scores row of its own. Heads are independent and write disjoint memory;
 * a head alone gives the bits of all heads at once (fy_nn_attend). */
static void attend_head(void *arg, int item)
{
    const heads_job *j = arg;
    const fy_encoder_scratch *s = j->s;
    int heads = j->e->heads, d = j->e->d, dk = d / heads;
    int i = item / heads, h = item % heads, n = j->len[i];
    size_t o = (size_t)j->off[i] * d + (size_t)h * dk;
    float *kt = s->kt + (size_t)j->off[i] * d + (size_t)h * dk * n;
    fy_transpose_cols(s->k + o, n, dk, d, kt);
    fy_nn_attend(s->q + o, n, d, kt, n, s->v + o, d, n, 1, dk,
                 s->scores + (size_t)j->off[i] * heads + (size_t)h * n, s->ctx + o, d);
}

/* Self-attention block: x = LN(Wo·attend(Wq·x, Wk·x, Wv·x) + bo + x). */
static void self_attention(const fy_encoder *e, const fy_nn_attn *a, float *x, int rows,
                           const int *off, const int *len, int nsent, const fy_encoder_scratch *s)
{
    int d = e->d;
    const fy_linear *qkv[] = {a->wq, a->wk, a->wv};
    float *out[] = {s->q, s->k, s->v};
    fy_linear_forward_set(qkv, 3, x, rows, s->lin, out);
    long work = 0;
    for (int i = 0; i < nsent; i++) work += (long)len[i] * len[i] * d;
    heads_job job = {e, s, off, len};
    fy_par_for(work >= ATTEND_PAR_MIN ? fy_par_attached() : NULL, nsent * e->heads, attend_head,
               &job);
    /* The queries are spent: their buffer takes the output projection. */
    fy_linear_forward(a->wo, s->ctx, rows, NULL, 0, s->lin, s->q);
    fy_nn_add_norm(x, s->q, rows, d, &a->ln);
}

void fy_encoder_forward(const fy_encoder *e, float *x, int rows, const int *off, const int *len,
                        int nsent, const fy_encoder_scratch *s)
{
    for (int i = 0; i < e->depth; i++) {
        const fy_encoder_layer *l = &e->layers[i];
        self_attention(e, &l->self, x, rows, off, len, nsent, s);
        fy_nn_ffn_forward(&l->ffn, x, rows, e->d, FY_NN_FFN_BLOCK, s->hidden, s->out, s->lin);
    }
}
