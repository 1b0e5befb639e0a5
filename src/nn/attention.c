/* attention.c - binding and running the transformer blocks shared by the
 * encoder and the decoder (see attention.h for the arithmetic). */
#include "nn/attention.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nn/ops.h"

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

/* Cephes' exp as the reference runs it (sse_mathfun.h exp_ps, one lane):
 * clamp, n = floor(x·log2e + 0.5) by truncation and correction, two-part
 * reduction, degree-5 polynomial, scale by 2^n through the exponent bits. */
float fy_nn_exp_ps(float x)
{
    x = x < 88.3762626647949f ? x : 88.3762626647949f;
    x = x > -88.3762626647949f ? x : -88.3762626647949f;
    float fx = x * 1.44269504088896341f;
    fx = fx + 0.5f;
    float tmp = (float)(int32_t)fx;
    fx = tmp > fx ? tmp - 1.0f : tmp;
    float z = fx * -2.12194440e-4f;
    x = x - fx * 0.693359375f;
    x = x - z;
    z = x * x;
    float y = 1.9875691500E-4f;
    y = y * x + 1.3981999507E-3f;
    y = y * x + 8.3334519073E-3f;
    y = y * x + 4.1665795894E-2f;
    y = y * x + 1.6666665459E-1f;
    y = y * x + 5.0000001201E-1f;
    y = y * z + x;
    y = y + 1.0f;
    union {
        uint32_t u;
        float f;
    } p = {.u = (uint32_t)((int32_t)fx + 127) << 23};
    return y * p.f;
}

/* Marian's CPU Softmax: rows whose length is a multiple of 4 run on four
 * lanes (exp_ps, a running sum per lane, lanes added in order); others run
 * scalar with the C library's expf and one running sum. */
static void attn_softmax(float *s, int n)
{
    float mx = s[0];
    for (int i = 1; i < n; i++) mx = mx < s[i] ? s[i] : mx;
    float sum = 0.0f;
    if (n % 4 == 0) {
        float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int i = 0; i < n; i += 4)
            for (int l = 0; l < 4; l++) {
                float e = fy_nn_exp_ps(s[i + l] - mx);
                lane[l] = lane[l] + e;
                s[i + l] = e;
            }
        for (int l = 0; l < 4; l++) sum = sum + lane[l];
    } else {
        for (int i = 0; i < n; i++) {
            float e = expf(s[i] - mx);
            sum = sum + e;
            s[i] = e;
        }
    }
    for (int i = 0; i < n; i++) s[i] = s[i] / sum;
}

/* scores[j] = (q·k_j)·scale for j < tk, with kt holding the keys
 * transposed (element c of key j at kt[c·ldkt + j]). Every score is summed
 * over c in order, as a plain dot product would; the loop runs across j, 8
 * keys at a time, so it vectorises without changing any result. */
static void attn_scores(const float *q, int dk, const float *kt, int ldkt, int tk, float scale,
                        float *scores)
{
    typedef float v4 __attribute__((vector_size(16)));
    int j = 0;
    for (; j + 8 <= tk; j += 8) {
        v4 a0 = {0}, a1 = {0};
        for (int c = 0; c < dk; c++) {
            v4 k0, k1;
            memcpy(&k0, kt + (size_t)c * ldkt + j, sizeof k0);
            memcpy(&k1, kt + (size_t)c * ldkt + j + 4, sizeof k1);
            a0 = a0 + q[c] * k0;
            a1 = a1 + q[c] * k1;
        }
        a0 = a0 * scale;
        a1 = a1 * scale;
        memcpy(scores + j, &a0, sizeof a0);
        memcpy(scores + j + 4, &a1, sizeof a1);
    }
    for (; j < tk; j++) {
        float s = 0.0f;
        for (int c = 0; c < dk; c++) s = s + q[c] * kt[(size_t)c * ldkt + j];
        scores[j] = s * scale;
    }
}

/* out[c] = sum over j in order of w[j]·v[j][c], c < dk, 8 columns at a time
 * (each column's sum keeps its order, so vectorising changes nothing). */
static void attn_mix(const float *w, int tk, const float *v, int ldv, int dk, float *out)
{
    typedef float v4 __attribute__((vector_size(16)));
    int c = 0;
    for (; c + 8 <= dk; c += 8) {
        v4 a0 = {0}, a1 = {0};
        for (int j = 0; j < tk; j++) {
            v4 v0, v1;
            memcpy(&v0, v + (size_t)j * ldv + c, sizeof v0);
            memcpy(&v1, v + (size_t)j * ldv + c + 4, sizeof v1);
            a0 = a0 + w[j] * v0;
            a1 = a1 + w[j] * v1;
        }
        memcpy(out + c, &a0, sizeof a0);
        memcpy(out + c + 4, &a1, sizeof a1);
    }
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
    for (int i = 0; i < tq; i++) {
        const float *qi = q + (size_t)i * ldq;
        float *oi = out + (size_t)i * ldo;
        for (int h = 0; h < heads; h++) {
            attn_scores(qi + h * dk, dk, kt + (size_t)h * dk * ldkt, ldkt, tk, scale, scores);
            attn_softmax(scores, tk);
            attn_mix(scores, tk, v + h * dk, ldv, dk, oi + h * dk);
        }
    }
}

void fy_nn_transpose(const float *x, int rows, int d, float *xt)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < d; c++) xt[(size_t)c * rows + r] = x[(size_t)r * d + c];
}

/* Marian's LayerNormalization as the reference's WASM build runs it
 * (checked in its disassembly): mean and variance summed sequentially in one
 * float each, sigma = sqrt(var/d + eps), out = gamma·((x − mean)/sigma) + beta
 * with a true division. */
static void layer_norm(float *x, int d, const fy_nn_norm *ln)
{
    float sum = 0.0f;
    for (int i = 0; i < d; i++) sum = sum + x[i];
    float mean = sum / (float)d;
    float sq = 0.0f;
    for (int i = 0; i < d; i++) {
        float e = x[i] - mean;
        sq = sq + e * e;
    }
    float sigma = sqrtf(sq / (float)d + FY_NN_LN_EPS);
    for (int i = 0; i < d; i++) x[i] = ln->scale[i] * ((x[i] - mean) / sigma) + ln->bias[i];
}

void fy_nn_add_norm(float *x, const float *y, int rows, int d, const fy_nn_norm *ln)
{
    for (int r = 0; r < rows; r++) {
        float *xr = x + (size_t)r * d;
        const float *yr = y + (size_t)r * d;
        for (int i = 0; i < d; i++) xr[i] = yr[i] + xr[i];
        layer_norm(xr, d, ln);
    }
}

/* x = max(x, 0), four floats at a time (ReLU is exact either way). */
static void relu(float *x, size_t n)
{
    typedef float v4 __attribute__((vector_size(16)));
    typedef int32_t v4i __attribute__((vector_size(16)));
    const v4 zero = {0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4 v;
        memcpy(&v, x + i, sizeof v);
        v4i keep = v > zero;
        v4i r = keep & (v4i)v;
        memcpy(x + i, &r, sizeof r);
    }
    for (; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void fy_nn_ffn_forward(const fy_nn_ffn *f, float *x, int rows, int d, int block, float *hidden,
                       float *out, void *scratch)
{
    int dffn = fy_linear_out(f->w1);
    for (int r = 0; r < rows; r += block) {
        int m = rows - r < block ? rows - r : block;
        float *xr = x + (size_t)r * d;
        fy_linear_forward(f->w1, xr, m, NULL, 0, scratch, hidden);
        relu(hidden, (size_t)m * dffn);
        fy_linear_forward(f->w2, hidden, m, NULL, 0, scratch, out);
        fy_nn_add_norm(xr, out, m, d, &f->ln);
    }
}
