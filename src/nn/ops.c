/* ops.c - the reference's float32 operations, bit for bit (see ops.h).
 *
 * Vector code uses GCC vector extensions on 4 lanes: SSE2 on x86-64 (every
 * such CPU has it), plain scalar code on other machines. Lanes only ever
 * hold independent results, each computed with the scalar operations in
 * the scalar order, so vectorising changes no bit. -ffp-contract=off (set
 * for the whole build) keeps the compiler from fusing a multiply and an
 * add, which the reference does not do.
 */
#include "nn/ops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nn/expf_impl.h"
#include "nn/vec4.h"

/* ---- exp ------------------------------------------------------------------ */
#define EXP_HI    88.3762626647949f
#define EXP_LOG2E 1.44269504088896341f
#define EXP_C1    0.693359375f
#define EXP_C2    -2.12194440e-4f
#define EXP_P0    1.9875691500E-4f
#define EXP_P1    1.3981999507E-3f
#define EXP_P2    8.3334519073E-3f
#define EXP_P3    4.1665795894E-2f
#define EXP_P4    1.6666665459E-1f
#define EXP_P5    5.0000001201E-1f

float fy_exp_ps(float x)
{
    x = x < EXP_HI ? x : EXP_HI;
    x = x > -EXP_HI ? x : -EXP_HI;
    float fx = x * EXP_LOG2E;
    fx = fx + 0.5f;
    float tmp = (float)(int32_t)fx;
    fx = tmp > fx ? tmp - 1.0f : tmp; /* floor by truncation and correction */
    float z = fx * EXP_C2;
    x = x - fx * EXP_C1;
    x = x - z;
    z = x * x;
    float y = EXP_P0;
    y = y * x + EXP_P1;
    y = y * x + EXP_P2;
    y = y * x + EXP_P3;
    y = y * x + EXP_P4;
    y = y * x + EXP_P5;
    y = y * z + x;
    y = y + 1.0f;
    union {
        uint32_t u;
        float f;
    } p = {.u = (uint32_t)((int32_t)fx + 127) << 23};
    return y * p.f;
}

/* fy_exp_ps on four lanes: the same operations, in the same order. */
static v4f exp_ps4(v4f x)
{
    const v4f hi = {EXP_HI, EXP_HI, EXP_HI, EXP_HI};
    x = select4(x < hi, x, hi);
    x = select4(x > -hi, x, -hi);
    v4f fx = x * EXP_LOG2E;
    fx = fx + 0.5f;
    v4f tmp = __builtin_convertvector(__builtin_convertvector(fx, v4i), v4f);
    fx = select4(tmp > fx, tmp - 1.0f, tmp);
    v4f z = fx * EXP_C2;
    x = x - fx * EXP_C1;
    x = x - z;
    z = x * x;
    v4f y = x * EXP_P0 + EXP_P1; /* EXP_P0·x, as y·x with y = P0 */
    y = y * x + EXP_P2;
    y = y * x + EXP_P3;
    y = y * x + EXP_P4;
    y = y * x + EXP_P5;
    y = y * z + x;
    y = y + 1.0f;
    v4u e = (v4u)(__builtin_convertvector(fx, v4i) + 127) << 23;
    return y * (v4f)e;
}

/* ---- expf --------------------------------------------------------------------
 * musl's expf (nn/expf_impl.h says how). */
const uint64_t fy_expf_tab[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};

float fy_expf(float x)
{
    uint32_t ux;
    memcpy(&ux, &x, sizeof ux);
    uint32_t abstop = (ux >> 20) & 0x7ff;
    if (abstop >= EXPF_ABSTOP_SPECIAL) { /* |x| >= 88, inf or NaN */
        if (ux == 0xff800000u) return 0.0f;
        if (abstop >= 0x7f8) return x + x;
        if (x > 0x1.62e42ep6f) return HUGE_VALF;
        if (x < -0x1.9fe368p6f) return 0.0f;
    }
    double z = EXPF_INVLN2N * (double)x;
    double kd = z + EXPF_SHIFT;
    uint64_t ki;
    memcpy(&ki, &kd, sizeof ki);
    kd = kd - EXPF_SHIFT;
    double r = z - kd;
    uint64_t t = fy_expf_tab[ki % 32] + (ki << 47);
    double s;
    memcpy(&s, &t, sizeof s);
    double p = EXPF_C0 * r + EXPF_C1;
    double r2 = r * r;
    double y = EXPF_C2 * r + 1.0;
    y = p * r2 + y;
    y = y * s;
    return (float)y;
}

/* ---- softmax ---------------------------------------------------------------- */
void fy_expf_row(float *x, int n, float mx)
{
    for (int i = 0; i < n; i++) x[i] = fy_expf(x[i] - mx);
}

void fy_softmax_with(float *x, int n, fy_expf_row_fn exps)
{
    float mx = x[0];
    for (int i = 1; i < n; i++) mx = mx < x[i] ? x[i] : mx;
    float sum = 0.0f;
    if (n % 4 == 0) {
        v4f lanes = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int i = 0; i < n; i += 4) {
            v4f e = exp_ps4(load4(x + i) - mx);
            lanes = lanes + e;
            store4(x + i, e);
        }
        for (int l = 0; l < 4; l++) sum = sum + lanes[l];
    } else {
        exps(x, n, mx);
        for (int i = 0; i < n; i++) sum = sum + x[i];
    }
    int i = 0;
    for (; i + 4 <= n; i += 4) store4(x + i, load4(x + i) / sum);
    for (; i < n; i++) x[i] = x[i] / sum;
}

void fy_softmax(float *x, int n)
{
    fy_softmax_with(x, n, fy_expf_row);
}

/* ---- layer norm --------------------------------------------------------------
 * Each row's sums are one sequential chain of dependent additions; four
 * rows run side by side so that four chains overlap. */
static void norm_stats4(float *const row[4], int d, float mean[4], float sigma[4])
{
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int i = 0; i < d; i++) {
        s0 = s0 + row[0][i];
        s1 = s1 + row[1][i];
        s2 = s2 + row[2][i];
        s3 = s3 + row[3][i];
    }
    float m[4] = {s0 / (float)d, s1 / (float)d, s2 / (float)d, s3 / (float)d};
    float q0 = 0.0f, q1 = 0.0f, q2 = 0.0f, q3 = 0.0f;
    for (int i = 0; i < d; i++) {
        float e0 = row[0][i] - m[0], e1 = row[1][i] - m[1];
        float e2 = row[2][i] - m[2], e3 = row[3][i] - m[3];
        q0 = q0 + e0 * e0;
        q1 = q1 + e1 * e1;
        q2 = q2 + e2 * e2;
        q3 = q3 + e3 * e3;
    }
    float q[4] = {q0, q1, q2, q3};
    for (int r = 0; r < 4; r++) {
        mean[r] = m[r];
        sigma[r] = sqrtf(q[r] / (float)d + FY_LN_EPS);
    }
}

static void norm_apply(float *x, int d, float mean, float sigma, const float *scale,
                       const float *bias)
{
    int i = 0;
    for (; i + 4 <= d; i += 4)
        store4(x + i, load4(scale + i) * ((load4(x + i) - mean) / sigma) + load4(bias + i));
    for (; i < d; i++) x[i] = scale[i] * ((x[i] - mean) / sigma) + bias[i];
}

void fy_add_layer_norm(float *x, const float *y, int rows, int d, const float *scale,
                       const float *bias)
{
    size_t n = (size_t)rows * d, i = 0;
    for (; i + 4 <= n; i += 4) store4(x + i, load4(y + i) + load4(x + i));
    for (; i < n; i++) x[i] = y[i] + x[i];
    for (int r = 0; r < rows; r += 4) {
        int k = rows - r < 4 ? rows - r : 4;
        float *row[4], mean[4], sigma[4];
        /* Missing rows repeat the last one: computed, never written. */
        for (int j = 0; j < 4; j++) row[j] = x + (size_t)(r + (j < k ? j : k - 1)) * d;
        norm_stats4(row, d, mean, sigma);
        for (int j = 0; j < k; j++) norm_apply(row[j], d, mean[j], sigma[j], scale, bias);
    }
}

/* ---- elementwise ---------------------------------------------------------------- */
void fy_relu(float *x, size_t n)
{
    const v4f zero = {0.0f, 0.0f, 0.0f, 0.0f};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f v = load4(x + i);
        store4(x + i, select4(v > zero, v, zero));
    }
    for (; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void fy_ssru_cell(float *cell, const float *f, const float *xw, float *out, size_t n)
{
    const v4f zero = {0.0f, 0.0f, 0.0f, 0.0f};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f e = exp_ps4(load4(f + i));
        v4f g = e / (1.0f + e);
        v4f c = g * load4(cell + i) + (1.0f - g) * load4(xw + i);
        store4(cell + i, c);
        store4(out + i, select4(c > zero, c, zero));
    }
    for (; i < n; i++) {
        float e = fy_exp_ps(f[i]);
        float g = e / (1.0f + e);
        float c = g * cell[i] + (1.0f - g) * xw[i];
        cell[i] = c;
        out[i] = c > 0.0f ? c : 0.0f;
    }
}

void fy_transpose(const float *x, int rows, int d, float *xt)
{
    fy_transpose_cols(x, rows, d, d, xt);
}

void fy_transpose_cols(const float *x, int rows, int cols, int ldx, float *xt)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) xt[(size_t)c * rows + r] = x[(size_t)r * ldx + c];
}

/* ---- positions -------------------------------------------------------------------
 * Marian's sinusoidalPositionEmbeddings in float32: h = d/2 (a float),
 * inc = log(10000)/(h - 1), v = p·exp(i·-inc), sin(v) in [0, h), cos(v) in
 * [h, d). exp, sin and cos are taken in double and rounded to float: the
 * correctly rounded float the reference's float libm functions give in all
 * but vanishingly rare cases, and the same bits on every machine. */
void fy_positional_fill(float *out, int rows, int d, int start_pos)
{
    float h = (float)d / 2;
    float inc = (float)log(10000.0) / (h - 1.0f);
    int nh = d / 2;
    for (int r = 0; r < rows; r++) {
        float *o = out + (size_t)r * d;
        float pos = (float)(start_pos + r);
        for (int i = 0; i < nh; i++) {
            float v = pos * (float)exp((double)((float)i * -inc));
            o[i] = (float)sin((double)v);
            o[nh + i] = (float)cos((double)v);
        }
    }
}
