/* test_ops.c - each float op twice: bit for bit against a plain scalar
 * transcription of the reference's operation written here (the vector code
 * in ops.c must change no bit), and against double precision (named
 * tolerances), so a transcription error cannot hide in both. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/cpu.h"
#include "nn/gemm_impl.h"
#include "nn/ops.h"
#include "../check.h"

#define TOL_EXP_REL 3e-7 /* fy_exp_ps: about 2.5 ulp */
#define TOL_LN      2e-5 /* layer norm output, absolute (outputs are O(1)) */
#define TOL_SOFTMAX 1e-6 /* probabilities, absolute */
#define TOL_SSRU    1e-5 /* cell values of magnitude up to ~10 */
#define TOL_POS     1e-4 /* positions up to 512: float rounding of p·freq */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static float frand(float lo, float hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (float)((rng_state >> 20) % 1000001) / 1000000.0f;
}

static int same_bits(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof(float)) == 0;
}

static void test_exp(void)
{
    double worst = 0;
    for (int i = 0; i <= 200000; i++) {
        float x = -87.0f + 175.0f * (float)i / 200000.0f;
        double want = exp((double)x);
        double e = fabs(fy_exp_ps(x) - want) / want;
        if (e > worst) worst = e;
    }
    CHECKF(worst <= TOL_EXP_REL, "fy_exp_ps relative error %.3g > %g", worst, TOL_EXP_REL);
    CHECKF(fy_exp_ps(0.0f) == 1.0f, "exp(0) == 1");
    /* Clamped at ±88.376: 0 (a scale of 2^-127 written as exponent bits 0)
     * and a huge finite number, never inf (Cephes' exp_ps). */
    float lo = fy_exp_ps(-1000.0f), hi = fy_exp_ps(1000.0f);
    CHECKF(lo == 0.0f && hi > 1e38f && isfinite(hi), "exp_ps clamps: %g %g", lo, hi);
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* |got - exp(x)| in units of the float spacing at exp(x) (2^-149 for
 * denormal results), exp(x) taken in double (relative error ~1e-16). */
static double expf_ulps(float x, float got)
{
    double want = exp((double)x);
    int e;
    frexp(want, &e);
    double ulp = ldexp(1.0, (e - 24 < -149 ? -149 : e - 24));
    return fabs((double)got - want) / ulp;
}

/* fy_expf: musl's algorithm without FMA. Every result within musl's bound
 * of 0.502 ulp of the double-precision exp, and all but a few correctly
 * rounded; the two inputs where glibc's FMA path differs give the
 * FMA-free (reference) bits; the special values. */
static void test_expf(void)
{
    double worst = 0;
    long count = 0, not_nearest = 0;
    /* every 97th float from -104 (below: 0) to 89 (above: inf), denormal results included */
    for (uint32_t u = to_bits(-0.0f); u < to_bits(-104.0f); u += 97, count++) {
        float x = from_bits(u), got = fy_expf(x);
        double e = expf_ulps(x, got);
        worst = fmax(worst, e);
        not_nearest += e > 0.5;
    }
    for (uint32_t u = 0; u < to_bits(88.7f); u += 97, count++) {
        float x = from_bits(u), got = fy_expf(x);
        double e = expf_ulps(x, got);
        worst = fmax(worst, e);
        not_nearest += e > 0.5;
    }
    CHECKF(worst <= 0.502, "fy_expf: %.4f ulp > 0.502 over %ld inputs", worst, count);
    CHECKF(not_nearest * 10000 < count, "fy_expf: %ld of %ld not correctly rounded", not_nearest,
           count);
    /* where glibc's FMA expf gives 0x1.f45326p-92 and 0x1.f93e38p+46 */
    CHECKF(to_bits(fy_expf(-0x1.f8cbb2p+5f)) == to_bits(0x1.f45324p-92f),
           "fy_expf(-0x1.f8cbb2p+5) %a", (double)fy_expf(-0x1.f8cbb2p+5f));
    CHECKF(to_bits(fy_expf(0x1.04845ep+5f)) == to_bits(0x1.f93e36p+46f),
           "fy_expf(0x1.04845ep+5) %a", (double)fy_expf(0x1.04845ep+5f));
    CHECKF(fy_expf(0.0f) == 1.0f && fy_expf(-0.0f) == 1.0f, "fy_expf(±0) == 1");
    CHECKF(to_bits(fy_expf(-INFINITY)) == 0 && to_bits(fy_expf(-104.0f)) == 0, "fy_expf: +0 below");
    CHECKF(isinf(fy_expf(INFINITY)) && isinf(fy_expf(89.0f)), "fy_expf: +inf above");
    CHECKF(isnan(fy_expf(NAN)), "fy_expf(NaN) is NaN");
    CHECKF(fy_expf(-0x1.9fe368p6f) > 0.0f && fy_expf(-0x1.9fe368p6f) < 0x1p-148f,
           "fy_expf: the smallest denormal at the underflow edge");
}

/* The reference's softmax, one element after the other. */
static void softmax_plain(float *x, int n)
{
    float mx = x[0];
    for (int i = 1; i < n; i++) mx = mx < x[i] ? x[i] : mx;
    float sum = 0.0f;
    if (n % 4 == 0) {
        float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int i = 0; i < n; i += 4)
            for (int l = 0; l < 4; l++) {
                float e = fy_exp_ps(x[i + l] - mx);
                lane[l] = lane[l] + e;
                x[i + l] = e;
            }
        for (int l = 0; l < 4; l++) sum = sum + lane[l];
    } else {
        for (int i = 0; i < n; i++) {
            float e = fy_expf(x[i] - mx);
            sum = sum + e;
            x[i] = e;
        }
    }
    for (int i = 0; i < n; i++) x[i] = x[i] / sum;
}

static void test_softmax(void)
{
    float x[64], y[64], z[64];
    int exact = 1;
    double worst = 0, sumerr = 0;
    for (int n = 1; n <= 64; n++) {
        for (int i = 0; i < n; i++) x[i] = frand(-20.0f, 20.0f);
        if (n > 5) x[5] = -99999999.0f; /* Marian's mask value */
        memcpy(y, x, sizeof(float) * n);
        memcpy(z, x, sizeof(float) * n);
        fy_softmax(y, n);
        softmax_plain(z, n);
        exact &= same_bits(y, z, (size_t)n);
        double mx = -INFINITY, s = 0, t = 0;
        for (int i = 0; i < n; i++) mx = fmax(mx, x[i]);
        for (int i = 0; i < n; i++) s += exp(x[i] - mx);
        for (int i = 0; i < n; i++) {
            worst = fmax(worst, fabs(y[i] - exp(x[i] - mx) / s));
            t += y[i];
        }
        sumerr = fmax(sumerr, fabs(t - 1.0));
        if (n > 5) CHECKF(y[5] == 0.0f, "masked position gets 0 (n %d)", n);
    }
    CHECKF(exact, "softmax == the plain reference transcription, bit for bit (n 1..64)");
    CHECKF(worst <= TOL_SOFTMAX, "softmax error %.3g > %g", worst, TOL_SOFTMAX);
    CHECKF(sumerr <= 1e-5, "softmax rows sum to 1 (%.3g)", sumerr);
}

/* Each path's fy_expf_row (the attention's softmax, several exponentials
 * in vector lanes) against fy_expf one by one, bit for bit: every 97th
 * float from -104 to 89 minus mx (0 and 1.75), in rows of an odd length
 * (lanes and the scalar rest), with the values fy_expf handles apart
 * (|x| >= 88, infinities, NaN, ±0) in every lane position; and
 * fy_softmax_with it against fy_softmax for rows of 1..64. */
static int expf_row_matches(fy_expf_row_fn row, const float *in, int n, float mx)
{
    float got[1001], want[1001];
    memcpy(got, in, sizeof(float) * (size_t)n);
    row(got, n, mx);
    for (int i = 0; i < n; i++) want[i] = fy_expf(in[i] - mx);
    return same_bits(got, want, (size_t)n);
}

static int expf_rows_sweep(fy_expf_row_fn row, float mx)
{
    enum { N = 1001 };
    float in[N];
    int n = 0, ok = 1;
    for (uint32_t u = to_bits(-0.0f); u < to_bits(-104.0f); u += 97) {
        in[n++] = from_bits(u);
        if (n == N) ok &= expf_row_matches(row, in, n, mx), n = 0;
    }
    for (uint32_t u = 0; u < to_bits(89.0f); u += 97) {
        in[n++] = from_bits(u);
        if (n == N) ok &= expf_row_matches(row, in, n, mx), n = 0;
    }
    return ok & expf_row_matches(row, in, n, mx);
}

static void test_expf_rows(void)
{
    const float odd[] = {-INFINITY, INFINITY, NAN,     -0.0f,          0.0f,          88.0f,
                         -88.0f,    88.73f,   -103.9f, -0x1.9fe368p6f, 0x1.62e42ep6f, -99999999.0f};
    const fy_isa paths[3] = {FY_ISA_REF, FY_ISA_AVX2, FY_ISA_AVX512VNNI};
    fy_isa was = fy_cpu_isa();
    for (int p = 0; p < 3; p++) {
        if (fy_cpu_force_isa(paths[p]) != 0) continue;
        fy_expf_row_fn row = fy_gemm_kernels_current()->expf_row;
        int ok = expf_rows_sweep(row, 0.0f) && expf_rows_sweep(row, 1.75f);
        CHECKF(ok, "%s: expf_row == fy_expf, bit for bit", fy_isa_name(paths[p]));
        int odd_ok = 1;
        for (size_t v = 0; v < sizeof odd / sizeof *odd; v++)
            for (int at = 0; at < 17; at++) {
                float in[17];
                for (int i = 0; i < 17; i++) in[i] = frand(-30.0f, 0.0f);
                in[at] = odd[v];
                odd_ok &= expf_row_matches(row, in, 17, 0.0f);
            }
        CHECKF(odd_ok, "%s: expf_row == fy_expf on the values of its other paths",
               fy_isa_name(paths[p]));
        int soft_ok = 1;
        for (int n = 1; n <= 64; n++) {
            float y[64], z[64];
            for (int i = 0; i < n; i++) y[i] = z[i] = frand(-20.0f, 20.0f);
            fy_softmax_with(y, n, row);
            fy_softmax(z, n);
            soft_ok &= same_bits(y, z, (size_t)n);
        }
        CHECKF(soft_ok, "%s: fy_softmax_with its expf_row == fy_softmax (n 1..64)",
               fy_isa_name(paths[p]));
    }
    fy_cpu_force_isa(was);
}

/* The reference's residual + layer norm of one row, one element after the other. */
static void add_norm_plain(float *x, const float *y, int d, const float *g, const float *b)
{
    for (int i = 0; i < d; i++) x[i] = y[i] + x[i];
    float sum = 0.0f;
    for (int i = 0; i < d; i++) sum = sum + x[i];
    float mean = sum / (float)d, sq = 0.0f;
    for (int i = 0; i < d; i++) {
        float e = x[i] - mean;
        sq = sq + e * e;
    }
    float sigma = sqrtf(sq / (float)d + FY_LN_EPS);
    for (int i = 0; i < d; i++) x[i] = g[i] * ((x[i] - mean) / sigma) + b[i];
}

static void test_layer_norm(void)
{
    const int maxrows = 9, d = 387; /* not a multiple of 4: exercises the tails */
    size_t n = (size_t)maxrows * d;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    float *got = malloc(sizeof(float) * n), *want = malloc(sizeof(float) * n);
    float *g = malloc(sizeof(float) * d), *b = malloc(sizeof(float) * d);
    for (size_t i = 0; i < n; i++) x[i] = frand(-3.0f, 5.0f), y[i] = frand(-1.0f, 1.0f);
    for (int i = 0; i < d; i++) g[i] = frand(0.5f, 1.5f), b[i] = frand(-0.5f, 0.5f);
    for (int i = 0; i < d; i++) x[2 * d + i] = 2.0f, y[2 * d + i] = 0.0f; /* variance 0 */
    int exact = 1;
    for (int rows = 1; rows <= maxrows; rows++) { /* 4-row groups and every remainder */
        memcpy(got, x, sizeof(float) * rows * d);
        memcpy(want, x, sizeof(float) * rows * d);
        fy_add_layer_norm(got, y, rows, d, g, b);
        for (int r = 0; r < rows; r++) add_norm_plain(want + r * d, y + r * d, d, g, b);
        exact &= same_bits(got, want, (size_t)rows * d);
    }
    CHECKF(exact, "add_layer_norm == the plain reference transcription, bit for bit (rows 1..9)");
    double worst = 0;
    for (int r = 0; r < maxrows; r++) {
        double mean = 0, var = 0;
        for (int i = 0; i < d; i++) mean += (double)x[r * d + i] + y[r * d + i];
        mean /= d;
        for (int i = 0; i < d; i++) {
            double e = (double)x[r * d + i] + y[r * d + i] - mean;
            var += e * e;
        }
        var /= d;
        for (int i = 0; i < d; i++) {
            double v = (double)x[r * d + i] + y[r * d + i];
            double w = g[i] * ((v - mean) / sqrt(var + 1e-6)) + b[i];
            worst = fmax(worst, fabs(got[r * d + i] - w));
        }
    }
    CHECKF(worst <= TOL_LN, "layer norm error %.3g > %g", worst, TOL_LN);
    int ok = 1;
    for (int i = 0; i < d; i++) ok &= got[2 * d + i] == b[i];
    CHECKF(ok, "constant row normalises to the bias");
    free(x);
    free(y);
    free(got);
    free(want);
    free(g);
    free(b);
}

static void test_ssru_cell(void)
{
    enum { N = 1003 }; /* vector body and a scalar tail */
    static float f[N], xw[N], c1[N], c2[N], o1[N], o2[N];
    for (int i = 0; i < N; i++) {
        f[i] = frand(-30.0f, 30.0f);
        xw[i] = frand(-5.0f, 5.0f);
        c1[i] = c2[i] = frand(-5.0f, 5.0f);
    }
    f[0] = 0.0f, f[1] = -100.0f, f[2] = 100.0f;
    fy_ssru_cell(c1, f, xw, o1, N);
    double worst = 0;
    int exact = 1;
    for (int i = 0; i < N; i++) {
        float e = fy_exp_ps(f[i]);
        float gate = e / (1.0f + e);
        float c = gate * c2[i] + (1.0f - gate) * xw[i];
        o2[i] = c > 0.0f ? c : 0.0f;
        exact &= memcmp(&c, &c1[i], sizeof c) == 0;
        double s = 1.0 / (1.0 + exp(-(double)f[i]));
        worst = fmax(worst, fabs(c1[i] - (s * c2[i] + (1 - s) * xw[i])));
        c2[i] = c;
    }
    CHECKF(exact && same_bits(o1, o2, N), "ssru cell == the plain transcription, bit for bit");
    CHECKF(worst <= TOL_SSRU, "ssru cell error %.3g > %g", worst, TOL_SSRU);
}

static void test_elementwise(void)
{
    float a[11], r[11];
    for (int i = 0; i < 11; i++) a[i] = (float)i - 4.5f;
    a[0] = -0.0f;
    a[1] = NAN;
    memcpy(r, a, sizeof a);
    fy_relu(r, 11);
    int ok = 1;
    for (int i = 0; i < 11; i++) {
        float w = a[i] > 0 ? a[i] : 0.0f;
        ok &= memcmp(&r[i], &w, sizeof w) == 0;
    }
    CHECKF(ok, "relu (and +0 for -0 and NaN, as x > 0 ? x : 0)");
    float m[6] = {1, 2, 3, 4, 5, 6}, t[6];
    fy_transpose(m, 2, 3, t);
    CHECKF(t[0] == 1 && t[1] == 4 && t[2] == 2 && t[3] == 5 && t[4] == 3 && t[5] == 6, "transpose");
    float h[4] = {0};
    fy_transpose_cols(m + 1, 2, 2, 3, h); /* columns 1 and 2 of m [2][3] */
    CHECKF(h[0] == 2 && h[1] == 5 && h[2] == 3 && h[3] == 6, "transpose of a column slice");
}

static void test_positional(void)
{
    const int d = 384, rows = 512;
    float *p = malloc(sizeof(float) * rows * d);
    float *q = malloc(sizeof(float) * rows * d);
    fy_positional_fill(p, rows, d, 0);
    int ok = 1;
    for (int i = 0; i < d / 2; i++) ok &= p[i] == 0.0f && p[d / 2 + i] == 1.0f;
    CHECKF(ok, "position 0: sin 0 then cos 1");
    double worst = 0;
    int differ = 0;
    const double inc = log(10000.0) / (d / 2 - 1.0);
    const float incf = logf(10000.f) / ((float)d / 2 - 1.f);
    for (int r = 0; r < rows; r++) {
        for (int i = 0; i < d / 2; i++) {
            double v = r * exp(-i * inc);
            worst = fmax(worst, fabs(p[r * d + i] - sin(v)));
            worst = fmax(worst, fabs(p[r * d + d / 2 + i] - cos(v)));
            /* Marian's float32 steps, each function correctly rounded to
             * float (as musl's sinf/cosf/expf in the WASM reference are, in
             * all but rare cases; glibc's sinf is not, ~1% differ by 1 ulp) */
            float vf = (float)r * (float)exp((double)((float)i * -incf));
            differ += p[r * d + i] != (float)sin((double)vf);
            differ += p[r * d + d / 2 + i] != (float)cos((double)vf);
        }
    }
    CHECKF(worst <= TOL_POS, "positions vs double formula: %.3g > %g", worst, TOL_POS);
    CHECKF(differ == 0, "positions vs Marian's float steps: %d of %d differ", differ, rows * d);
    /* start_pos shifts rows */
    fy_positional_fill(q, 3, d, 7);
    CHECKF(memcmp(q, p + 7 * d, sizeof(float) * 3 * d) == 0, "start_pos 7 == rows 7..9");
    free(p);
    free(q);
}

int main(void)
{
    test_exp();
    test_expf();
    test_layer_norm();
    test_softmax();
    test_expf_rows();
    test_ssru_cell();
    test_elementwise();
    test_positional();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
