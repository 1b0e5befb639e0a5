/* attention.c - binding and running the transformer blocks shared by the
 * encoder and the decoder (see attention.h for the arithmetic). */
#include "nn/attention.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nn/ops.h"
#include "nn/vec4.h"

/* ------------------------------------------------------------------------ */
/* Binding                                                                   */
/* ------------------------------------------------------------------------ */

const float *fy_nn_bind_floats(const fy_marian *m, const char *name, size_t count, fy_error *err)
{
    const fy_tensor *t = fy_marian_find(m, name);
    if (!t) {
        fy_err(err, FY_EFORMAT, "%s: tensor %s is missing", fy_marian_path(m), name);
        return NULL;
    }
    if (t->type != FY_DT_F32 || t->count != count) {
        fy_err(err, FY_EFORMAT, "%s: tensor %s is %s with %zu elements, expected float32 with %zu",
               fy_marian_path(m), name, fy_dtype_name(t->type), t->count, count);
        return NULL;
    }
    return t->data;
}

fy_linear *fy_nn_bind_linear(const fy_marian *m, const char *wname, const char *bname, int k, int n,
                             fy_error *err)
{
    const fy_tensor *w = fy_marian_find(m, wname);
    if (!w) {
        fy_err(err, FY_EFORMAT, "%s: tensor %s is missing", fy_marian_path(m), wname);
        return NULL;
    }
    if (w->ndim != 2 || w->shape[0] != k || w->shape[1] != n) {
        fy_err(err, FY_EFORMAT, "%s: tensor %s has shape [%d, %d], expected [%d, %d]",
               fy_marian_path(m), wname, w->shape[0], w->ndim > 1 ? w->shape[1] : 0, k, n);
        return NULL;
    }
    const float *bias = NULL;
    if (bname) {
        bias = fy_nn_bind_floats(m, bname, (size_t)n, err);
        if (!bias) return NULL;
    }
    fy_linear *l = NULL;
    if (w->type == FY_DT_INTGEMM8) {
        char aname[256];
        snprintf(aname, sizeof aname, "%s_QuantMultA", wname);
        const float *alpha = fy_nn_bind_floats(m, aname, 1, err);
        if (!alpha) return NULL;
        /* In place: the translator keeps the model mapped while it lives. */
        l = fy_linear_view_i8(w->data, n, k, w->quant_mult, *alpha, bias, err);
    } else if (w->type == FY_DT_F32) {
        l = fy_linear_new_f32(w->data, k, n, bias, err);
    } else {
        fy_err(err, FY_EUNSUPPORTED, "%s: tensor %s has type %s, expected float32 or intgemm8",
               fy_marian_path(m), wname, fy_dtype_name(w->type));
        return NULL;
    }
    if (!l) fy_err_prefix(err, "%s: tensor %s", fy_marian_path(m), wname);
    return l;
}

int fy_nn_norm_bind(const fy_marian *m, const char *name, int d, fy_nn_norm *out, fy_error *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s_ln_scale", name);
    out->scale = fy_nn_bind_floats(m, buf, (size_t)d, err);
    if (!out->scale) return err ? err->code : FY_EFORMAT;
    snprintf(buf, sizeof buf, "%s_ln_bias", name);
    out->bias = fy_nn_bind_floats(m, buf, (size_t)d, err);
    if (!out->bias) return err ? err->code : FY_EFORMAT;
    return 0;
}

/* Binds prefix_W<x> with bias prefix_b<x>, both of width d. */
static fy_linear *bind_proj(const fy_marian *m, const char *prefix, char x, int d, fy_error *err)
{
    char wname[256], bname[256];
    snprintf(wname, sizeof wname, "%s_W%c", prefix, x);
    snprintf(bname, sizeof bname, "%s_b%c", prefix, x);
    return fy_nn_bind_linear(m, wname, bname, d, d, err);
}

int fy_nn_attn_bind(const fy_marian *m, const char *prefix, int d, fy_nn_attn *a, fy_error *err)
{
    char name[256];
    memset(a, 0, sizeof *a);
    if (!(a->wq = bind_proj(m, prefix, 'q', d, err))) goto fail;
    if (!(a->wk = bind_proj(m, prefix, 'k', d, err))) goto fail;
    if (!(a->wv = bind_proj(m, prefix, 'v', d, err))) goto fail;
    if (!(a->wo = bind_proj(m, prefix, 'o', d, err))) goto fail;
    snprintf(name, sizeof name, "%s_Wo", prefix);
    if (fy_nn_norm_bind(m, name, d, &a->ln, err) < 0) goto fail;
    return 0;
fail:
    fy_nn_attn_free(a);
    return err && err->code ? err->code : FY_EFORMAT;
}

void fy_nn_attn_free(fy_nn_attn *a)
{
    if (!a) return;
    fy_linear_free(a->wq);
    fy_linear_free(a->wk);
    fy_linear_free(a->wv);
    fy_linear_free(a->wo);
    memset(a, 0, sizeof *a);
}

int fy_nn_ffn_bind(const fy_marian *m, const char *prefix, int d, int dffn, fy_nn_ffn *f,
                   fy_error *err)
{
    char w[256], b[256];
    memset(f, 0, sizeof *f);
    snprintf(w, sizeof w, "%s_W1", prefix);
    snprintf(b, sizeof b, "%s_b1", prefix);
    if (!(f->w1 = fy_nn_bind_linear(m, w, b, d, dffn, err))) goto fail;
    snprintf(w, sizeof w, "%s_W2", prefix);
    snprintf(b, sizeof b, "%s_b2", prefix);
    if (!(f->w2 = fy_nn_bind_linear(m, w, b, dffn, d, err))) goto fail;
    snprintf(w, sizeof w, "%s_ffn", prefix);
    if (fy_nn_norm_bind(m, w, d, &f->ln, err) < 0) goto fail;
    return 0;
fail:
    fy_nn_ffn_free(f);
    return err && err->code ? err->code : FY_EFORMAT;
}

void fy_nn_ffn_free(fy_nn_ffn *f)
{
    if (!f) return;
    fy_linear_free(f->w1);
    fy_linear_free(f->w2);
    memset(f, 0, sizeof *f);
}

/* ------------------------------------------------------------------------ */
/* Forward                                                                   */
/* ------------------------------------------------------------------------ */

/* scores[j] = (q·k_j)·scale for nb·4 keys from kt (element c of key j at
 * kt[c·ldkt + j]): each score summed over c in order, as a plain dot
 * product would be; the lanes hold different keys, so nb independent
 * accumulators run side by side. nb is a constant where this is inlined. */
static inline __attribute__((always_inline)) void scores_block(const float *q, int dk,
                                                               const float *kt, size_t ldkt, int nb,
                                                               float scale, float *scores)
{
    v4f acc[12] = {0};
    for (int c = 0; c < dk; c++) {
        const float *k = kt + (size_t)c * ldkt;
#pragma GCC unroll 12
        for (int b = 0; b < nb; b++) acc[b] = acc[b] + q[c] * load4(k + 4 * b);
    }
#pragma GCC unroll 12
    for (int b = 0; b < nb; b++) store4(scores + 4 * b, acc[b] * scale);
}

/* The score of one key in four partial sums, element c in sum c % 4, added
 * as (s0 + s1) + (s2 + s3), then the rest of the elements (dk % 4) in order:
 * the order of the reference's GEMM kernel (Eigen's gebp) for a key of the
 * last, incomplete block of four keys against a query of a complete block
 * of four queries (see fy_nn_attend). */
static float dot_split4(const float *q, int dk, const float *k, size_t ldk)
{
    float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f;
    int c = 0;
    for (; c + 4 <= dk; c += 4) {
        p0 = p0 + q[c] * k[(size_t)c * ldk];
        p1 = p1 + q[c + 1] * k[(size_t)(c + 1) * ldk];
        p2 = p2 + q[c + 2] * k[(size_t)(c + 2) * ldk];
        p3 = p3 + q[c + 3] * k[(size_t)(c + 3) * ldk];
    }
    float acc = (p0 + p1) + (p2 + p3);
    for (; c < dk; c++) acc = acc + q[c] * k[(size_t)c * ldk];
    return acc;
}

/* The scores of one query against tk keys. split: the query is in a
 * complete block of four queries, so the keys past the last multiple of
 * four are summed by dot_split4; every other score is summed in order. */
static void attn_scores(const float *q, int dk, const float *kt, int ldkt, int tk, float scale,
                        int split, float *scores)
{
    int j = 0;
    for (; j + 32 <= tk; j += 32) scores_block(q, dk, kt + j, (size_t)ldkt, 8, scale, scores + j);
    for (; j + 16 <= tk; j += 16) scores_block(q, dk, kt + j, (size_t)ldkt, 4, scale, scores + j);
    for (; j + 4 <= tk; j += 4) scores_block(q, dk, kt + j, (size_t)ldkt, 1, scale, scores + j);
    if (j == tk) return;
    int rest = tk - j;
    if (split) {
        for (int i = 0; i < rest; i++)
            scores[j + i] = dot_split4(q, dk, kt + j + i, (size_t)ldkt) * scale;
        return;
    }
    float s[3] = {0.0f, 0.0f, 0.0f}; /* the last 1-3 keys, side by side too */
    for (int c = 0; c < dk; c++)
        for (int i = 0; i < rest; i++) s[i] = s[i] + q[c] * kt[(size_t)c * ldkt + j + i];
    for (int i = 0; i < rest; i++) scores[j + i] = s[i] * scale;
}

/* out[c] = sum over j in order of w[j]·v[j][c] for nb·4 columns: each
 * column's sum keeps its order; lanes and accumulators hold different
 * columns. */
static inline __attribute__((always_inline)) void mix_block(const float *w, int tk, const float *v,
                                                            size_t ldv, int nb, float *out)
{
    v4f acc[12] = {0};
    for (int j = 0; j < tk; j++) {
        const float *vj = v + (size_t)j * ldv;
#pragma GCC unroll 12
        for (int b = 0; b < nb; b++) acc[b] = acc[b] + w[j] * load4(vj + 4 * b);
    }
#pragma GCC unroll 12
    for (int b = 0; b < nb; b++) store4(out + 4 * b, acc[b]);
}

static void attn_mix(const float *w, int tk, const float *v, int ldv, int dk, float *out)
{
    int c = 0;
    for (; c + 48 <= dk; c += 48) mix_block(w, tk, v + c, (size_t)ldv, 12, out + c);
    for (; c + 32 <= dk; c += 32) mix_block(w, tk, v + c, (size_t)ldv, 8, out + c);
    for (; c + 16 <= dk; c += 16) mix_block(w, tk, v + c, (size_t)ldv, 4, out + c);
    for (; c + 4 <= dk; c += 4) mix_block(w, tk, v + c, (size_t)ldv, 1, out + c);
    for (; c < dk; c++) {
        float acc = 0.0f;
        for (int j = 0; j < tk; j++) acc = acc + w[j] * v[(size_t)j * ldv + c];
        out[c] = acc;
    }
}

void fy_nn_attend(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                  int ldv, int tk, int heads, int d, float *scores, float *out, int ldo)
{
    int dk = d / heads;
    float scale = 1.0f / sqrtf((float)dk);
    int blocked = tq / 4 * 4; /* queries in complete blocks of four */
    for (int i = 0; i < tq; i++) {
        const float *qi = q + (size_t)i * ldq;
        float *oi = out + (size_t)i * ldo;
        for (int h = 0; h < heads; h++) {
            attn_scores(qi + h * dk, dk, kt + (size_t)h * dk * ldkt, ldkt, tk, scale, i < blocked,
                        scores);
            fy_softmax(scores, tk);
            attn_mix(scores, tk, v + h * dk, ldv, dk, oi + h * dk);
        }
    }
}

void fy_nn_add_norm(float *x, const float *y, int rows, int d, const fy_nn_norm *ln)
{
    fy_add_layer_norm(x, y, rows, d, ln->scale, ln->bias);
}

void fy_nn_ffn_forward(const fy_nn_ffn *f, float *x, int rows, int d, int block, float *hidden,
                       float *out, void *scratch)
{
    int dffn = fy_linear_out(f->w1);
    for (int r = 0; r < rows; r += block) {
        int m = rows - r < block ? rows - r : block;
        float *xr = x + (size_t)r * d;
        fy_linear_forward(f->w1, xr, m, NULL, 0, scratch, hidden);
        fy_relu(hidden, (size_t)m * dffn);
        fy_linear_forward(f->w2, hidden, m, NULL, 0, scratch, out);
        fy_nn_add_norm(xr, out, m, d, &f->ln);
    }
}
