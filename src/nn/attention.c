/* attention.c - binding and running the transformer blocks shared by the
 * encoder and the decoder (see attention.h for the arithmetic). */
#include "nn/attention.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nn/gemm_impl.h"
#include "nn/ops.h"
#include "nn/par.h"

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

void fy_nn_attend(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                  int ldv, int tk, int heads, int d, float *scores, float *out, int ldo)
{
    /* the same bits on every path (attend_kernel.h); the choice is speed */
    fy_gemm_kernels_current()->attend(q, tq, ldq, kt, ldkt, v, ldv, tk, heads, d, scores, out, ldo);
}

/* Rows of a layer norm an item of a shared job: ~1 us each (two chains of
 * d dependent additions), several per hand-off. */
#define NORM_ROWS 8

typedef struct norm_job {
    float *x;
    const float *y;
    int rows, d;
    const fy_nn_norm *ln;
} norm_job;

static void norm_item(void *arg, int item)
{
    const norm_job *j = arg;
    int r0 = item * NORM_ROWS, n = j->rows - r0 < NORM_ROWS ? j->rows - r0 : NORM_ROWS;
    size_t o = (size_t)r0 * j->d;
    fy_add_layer_norm(j->x + o, j->y + o, n, j->d, j->ln->scale, j->ln->bias);
}

/* Each row is normalised alone, so the rows of many (an encoder layer's)
 * go to the calling thread's helpers in blocks; a few stay on it. */
void fy_nn_add_norm(float *x, const float *y, int rows, int d, const fy_nn_norm *ln)
{
    if (rows < 2 * NORM_ROWS) {
        fy_add_layer_norm(x, y, rows, d, ln->scale, ln->bias);
        return;
    }
    norm_job job = {x, y, rows, d, ln};
    fy_par_for(fy_par_attached(), (rows + NORM_ROWS - 1) / NORM_ROWS, norm_item, &job);
}

void fy_nn_ffn_forward(const fy_nn_ffn *f, float *x, int rows, int d, int block, float *hidden,
                       float *out, void *scratch)
{
    for (int r = 0; r < rows; r += block) {
        int m = rows - r < block ? rows - r : block;
        float *xr = x + (size_t)r * d;
        fy_linear_forward_relu(f->w1, xr, m, scratch, hidden);
        fy_linear_forward(f->w2, hidden, m, NULL, 0, scratch, out);
        fy_nn_add_norm(xr, out, m, d, &f->ln);
    }
}
