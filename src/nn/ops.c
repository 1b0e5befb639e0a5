/* ops.c - float32 row and elementwise operations (see ops.h).
 *
 * Everything here is plain C or SSE2 (part of every x86-64 CPU) with a
 * scalar twin that performs the same operations in the same order, so the
 * results are the same bits on every machine whatever kernel path the
 * GEMMs use. Formulas follow Marian's CPU operators (tensor_operators.cpp,
 * functional/operators.h, graph/node_initializers.cpp).
 */
#include "nn/ops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define OPS_SSE2 1
#endif

/* ---- exp ---------------------------------------------------------------
 * Cephes-style expf: n = rint(x·log2 e), r = x - n·ln 2 (two-part constant),
 * a degree-7 polynomial, then scaling by 2^n through the exponent bits.
 * Relative error about 1 ulp; 0 for x below -87.33 or NaN (masked attention
 * logits), inputs above 88.37 are clamped (callers pass x <= 0). */
#define EXP_HI    88.3762626647949f
#define EXP_LO    -87.3365478515625f
#define EXP_LOG2E 1.44269504088896341f
#define EXP_C1    0.693359375f
#define EXP_C2    -2.12194440e-4f
#define EXP_P0    1.9875691500E-4f
#define EXP_P1    1.3981999507E-3f
#define EXP_P2    8.3334519073E-3f
#define EXP_P3    4.1665795894E-2f
#define EXP_P4    1.6666665459E-1f
#define EXP_P5    5.0000001201E-1f

static float exp_scalar(float x)
{
    if (!(x >= EXP_LO)) return 0.0f; /* NaN too, like the SSE2 twin */
    if (x > EXP_HI) x = EXP_HI;
    float n = rintf(x * EXP_LOG2E);
    float r = x - n * EXP_C1;
    r = r - n * EXP_C2;
    float p = EXP_P0;
    p = p * r + EXP_P1;
    p = p * r + EXP_P2;
    p = p * r + EXP_P3;
    p = p * r + EXP_P4;
    p = p * r + EXP_P5;
    p = p * (r * r) + r + 1.0f;
    union {
        uint32_t u;
        float f;
    } s = {.u = (uint32_t)((int32_t)n + 127) << 23};
    return p * s.f;
}

#ifdef OPS_SSE2
/* The same operations on 4 lanes (cvtps_epi32 rounds like rintf). */
static __m128 exp_sse2(__m128 x)
{
    __m128 keep = _mm_cmpge_ps(x, _mm_set1_ps(EXP_LO)); /* false for NaN and small */
    x = _mm_min_ps(x, _mm_set1_ps(EXP_HI));
    x = _mm_max_ps(x, _mm_set1_ps(EXP_LO));
    __m128i ni = _mm_cvtps_epi32(_mm_mul_ps(x, _mm_set1_ps(EXP_LOG2E)));
    __m128 n = _mm_cvtepi32_ps(ni);
    __m128 r = _mm_sub_ps(x, _mm_mul_ps(n, _mm_set1_ps(EXP_C1)));
    r = _mm_sub_ps(r, _mm_mul_ps(n, _mm_set1_ps(EXP_C2)));
    __m128 p = _mm_set1_ps(EXP_P0);
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(EXP_P1));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(EXP_P2));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(EXP_P3));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(EXP_P4));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(EXP_P5));
    p = _mm_add_ps(_mm_add_ps(_mm_mul_ps(p, _mm_mul_ps(r, r)), r), _mm_set1_ps(1.0f));
    __m128 s = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(ni, _mm_set1_epi32(127)), 23));
    return _mm_and_ps(_mm_mul_ps(p, s), keep);
}
#endif

float fy_expf(float x)
{
    return exp_scalar(x);
}

/* ---- layer norm ----------------------------------------------------------
 * Sums use 8 running partial sums combined in a fixed order: fast, and the
 * same bits everywhere (the reference's own order is not observable). */
static float sum8(const float *x, int n)
{
    float s[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) s[l] = s[l] + x[i + l];
    for (; i < n; i++) s[0] = s[0] + x[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static void layer_norm_row(float *row, int d, const float *gamma, const float *beta, float eps)
{
    float mean = sum8(row, d) / (float)d;
    float s[8] = {0};
    int i = 0;
    for (; i + 8 <= d; i += 8) {
        for (int l = 0; l < 8; l++) {
            float v = row[i + l] - mean;
            s[l] = s[l] + v * v;
        }
    }
    for (; i < d; i++) {
        float v = row[i] - mean;
        s[0] = s[0] + v * v;
    }
    float sq = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    /* Marian divides by sigma (it does not multiply by 1/sigma) */
    float sigma = sqrtf(sq / (float)d + eps);
    for (i = 0; i < d; i++) {
        float t = gamma[i] * ((row[i] - mean) / sigma);
        row[i] = beta ? t + beta[i] : t;
    }
}

void fy_layer_norm(float *x, int rows, int d, const float *gamma, const float *beta, float eps)
{
    for (int r = 0; r < rows; r++) layer_norm_row(x + (size_t)r * d, d, gamma, beta, eps);
}

void fy_add_layer_norm(float *x, const float *res, int rows, int d, const float *gamma,
                       const float *beta, float eps)
{
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * d;
        const float *rr = res + (size_t)r * d;
        for (int i = 0; i < d; i++) row[i] = row[i] + rr[i];
        layer_norm_row(row, d, gamma, beta, eps);
    }
}

/* ---- softmax ------------------------------------------------------------- */
static void exp_sub_inplace(float *x, int n, float sub)
{
    int i = 0;
#ifdef OPS_SSE2
    const __m128 vs = _mm_set1_ps(sub);
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(x + i, exp_sse2(_mm_sub_ps(_mm_loadu_ps(x + i), vs)));
#endif
    for (; i < n; i++) x[i] = exp_scalar(x[i] - sub);
}

void fy_softmax_rows(float *x, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * n;
        float mx = row[0];
        for (int i = 1; i < n; i++)
            if (row[i] > mx) mx = row[i];
        exp_sub_inplace(row, n, mx);
        float sum = sum8(row, n);
        for (int i = 0; i < n; i++) row[i] = row[i] / sum;
    }
}

/* ---- elementwise ---------------------------------------------------------- */
void fy_relu(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* Marian: x > 0 ? 1/(1+e^-x) : e^x/(1+e^x); both use e = exp(-|x|). */
void fy_sigmoid(float *x, size_t n)
{
    size_t i = 0;
#ifdef OPS_SSE2
    const __m128 one = _mm_set1_ps(1.0f), sign = _mm_set1_ps(-0.0f);
    for (; i + 4 <= n; i += 4) {
        __m128 v = _mm_loadu_ps(x + i);
        __m128 e = exp_sse2(_mm_or_ps(v, sign)); /* -|x| */
        __m128 d = _mm_add_ps(one, e);
        __m128 pos = _mm_div_ps(one, d), neg = _mm_div_ps(e, d);
        __m128 gt = _mm_cmpgt_ps(v, _mm_setzero_ps());
        _mm_storeu_ps(x + i, _mm_or_ps(_mm_and_ps(gt, pos), _mm_andnot_ps(gt, neg)));
    }
#endif
    for (; i < n; i++) {
        float e = exp_scalar(-fabsf(x[i]));
        x[i] = x[i] > 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
    }
}

void fy_add(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = y[i] + x[i];
}

void fy_add_bias(float *y, int rows, int n, const float *b)
{
    for (int r = 0; r < rows; r++) {
        float *row = y + (size_t)r * n;
        for (int j = 0; j < n; j++) row[j] = row[j] + b[j];
    }
}

void fy_scale(float *x, size_t n, float s)
{
    for (size_t i = 0; i < n; i++) x[i] = x[i] * s;
}

/* ---- positions -------------------------------------------------------------
 * Marian's sinusoidalPositionEmbeddings in float32: h = d/2 (a float),
 * inc = log(10000)/(h - 1), v = p·exp(i·-inc), sin(v) in [0, h), cos(v) in
 * [h, d). exp, sin and cos are taken in double and rounded to float: the
 * correctly rounded float the reference's float libm functions give in all
 * but vanishingly rare cases, and the same bits on every machine. */
static void positional_row(float *out, int d, int pos, int add)
{
    float h = (float)d / 2;
    float inc = (float)log(10000.0) / (h - 1.0f);
    int nh = d / 2;
    for (int i = 0; i < nh; i++) {
        float e = (float)exp((double)((float)i * -inc));
        float v = (float)pos * e;
        float s = (float)sin((double)v), c = (float)cos((double)v);
        if (add) {
            out[i] = out[i] + s;
            out[nh + i] = out[nh + i] + c;
        } else {
            out[i] = s;
            out[nh + i] = c;
        }
    }
}

void fy_positional_add(float *x, int rows, int d, int start_pos)
{
    for (int r = 0; r < rows; r++) positional_row(x + (size_t)r * d, d, start_pos + r, 1);
}

void fy_positional_fill(float *out, int rows, int d, int start_pos)
{
    for (int r = 0; r < rows; r++) positional_row(out + (size_t)r * d, d, start_pos + r, 0);
}
