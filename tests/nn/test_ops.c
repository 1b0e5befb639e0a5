/* test_ops.c - each float op against a straightforward double-precision
 * reference (named tolerances), plus the determinism of the SSE2 and scalar
 * code paths inside ops.c (same bits for the same input). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/ops.h"

#define TOL_EXP_REL 3e-7 /* fy_expf: about 2.5 ulp */
#define TOL_LN      2e-5 /* layer norm output, absolute (outputs are O(1)) */
#define TOL_SOFTMAX 1e-6 /* probabilities, absolute */
#define TOL_SIGMOID 1e-6 /* absolute */
#define TOL_POS     1e-4 /* positions up to 512: float rounding of p·freq */

static int passed, failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static float frand(float lo, float hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (float)((rng_state >> 20) % 1000001) / 1000000.0f;
}

static void test_exp(void)
{
    double worst = 0;
    for (int i = 0; i <= 200000; i++) {
        float x = -87.0f + 175.0f * (float)i / 200000.0f;
        double want = exp((double)x);
        double e = fabs(fy_expf(x) - want) / want;
        if (e > worst) worst = e;
    }
    CHECK(worst <= TOL_EXP_REL, "fy_expf relative error %.3g > %g", worst, TOL_EXP_REL);
    CHECK(fy_expf(0.0f) == 1.0f, "exp(0) == 1");
    CHECK(fy_expf(-INFINITY) == 0.0f && fy_expf(-100.0f) == 0.0f, "exp of very negative is 0");
}

static void test_layer_norm(void)
{
    const int rows = 5, d = 387; /* not a multiple of 8: exercises the tail */
    float *x = malloc(sizeof(float) * rows * d), *g = malloc(sizeof(float) * d),
          *b = malloc(sizeof(float) * d), *x2 = malloc(sizeof(float) * rows * d);
    for (int i = 0; i < rows * d; i++) x[i] = frand(-3.0f, 5.0f);
    for (int i = 0; i < d; i++) g[i] = frand(0.5f, 1.5f), b[i] = frand(-0.5f, 0.5f);
    memcpy(x2, x, sizeof(float) * rows * d);
    fy_layer_norm(x2, rows, d, g, b, 1e-6f);
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        double mean = 0, var = 0;
        for (int i = 0; i < d; i++) mean += x[r * d + i];
        mean /= d;
        for (int i = 0; i < d; i++) var += (x[r * d + i] - mean) * (x[r * d + i] - mean);
        var /= d;
        for (int i = 0; i < d; i++) {
            double want = g[i] * ((x[r * d + i] - mean) / sqrt(var + 1e-6)) + b[i];
            double e = fabs(x2[r * d + i] - want);
            if (e > worst) worst = e;
        }
    }
    CHECK(worst <= TOL_LN, "layer norm error %.3g > %g", worst, TOL_LN);
    /* fused residual: the same bits as add then normalise */
    float *y1 = malloc(sizeof(float) * rows * d), *y2 = malloc(sizeof(float) * rows * d);
    memcpy(y1, x, sizeof(float) * rows * d);
    memcpy(y2, x, sizeof(float) * rows * d);
    fy_add(y1, x2, (size_t)rows * d);
    fy_layer_norm(y1, rows, d, g, b, 1e-6f);
    fy_add_layer_norm(y2, x2, rows, d, g, b, 1e-6f);
    CHECK(memcmp(y1, y2, sizeof(float) * rows * d) == 0, "add_layer_norm == add + layer_norm");
    free(y1);
    free(y2);
    /* no beta, and a constant row (variance 0: eps keeps it finite) */
    for (int i = 0; i < d; i++) x2[i] = 2.0f;
    fy_layer_norm(x2, 1, d, g, NULL, 1e-6f);
    int ok = 1;
    for (int i = 0; i < d; i++) ok &= x2[i] == 0.0f;
    CHECK(ok, "constant row normalises to 0");
    free(x);
    free(x2);
    free(g);
    free(b);
}

static void test_softmax(void)
{
    const int rows = 4, n = 37;
    float x[4 * 37], y[4 * 37];
    for (int i = 0; i < rows * n; i++) x[i] = frand(-20.0f, 20.0f);
    x[5] = -INFINITY; /* a masked position */
    x[n + 3] = -1e9f;
    memcpy(y, x, sizeof x);
    fy_softmax_rows(y, rows, n);
    double worst = 0, sumerr = 0;
    for (int r = 0; r < rows; r++) {
        double mx = -INFINITY, s = 0, t = 0;
        for (int i = 0; i < n; i++) mx = fmax(mx, x[r * n + i]);
        for (int i = 0; i < n; i++) s += exp(x[r * n + i] - mx);
        for (int i = 0; i < n; i++) {
            double e = fabs(y[r * n + i] - exp(x[r * n + i] - mx) / s);
            if (e > worst) worst = e;
            t += y[r * n + i];
        }
        sumerr = fmax(sumerr, fabs(t - 1.0));
    }
    CHECK(worst <= TOL_SOFTMAX, "softmax error %.3g > %g", worst, TOL_SOFTMAX);
    CHECK(sumerr <= 1e-5, "softmax rows sum to 1 (%.3g)", sumerr);
    CHECK(y[5] == 0.0f && y[n + 3] == 0.0f, "masked positions get probability 0");
}

static void test_sigmoid(void)
{
    enum { N = 1003 };
    static float x[N], y[N], z[N];
    for (int i = 0; i < N; i++) x[i] = frand(-30.0f, 30.0f);
    x[0] = 0.0f;
    x[1] = -100.0f;
    x[2] = 100.0f;
    memcpy(y, x, sizeof x);
    fy_sigmoid(y, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double e = fabs(y[i] - 1.0 / (1.0 + exp(-(double)x[i])));
        if (e > worst) worst = e;
    }
    CHECK(worst <= TOL_SIGMOID, "sigmoid error %.3g > %g", worst, TOL_SIGMOID);
    CHECK(y[0] == 0.5f && y[2] == 1.0f && y[1] >= 0.0f && y[1] < 1e-30f, "sigmoid edges");
    /* one at a time takes the scalar path: the same bits as the SSE2 path */
    for (int i = 0; i < N; i++) {
        z[i] = x[i];
        fy_sigmoid(z + i, 1);
    }
    CHECK(memcmp(y, z, sizeof y) == 0, "sigmoid vector and scalar paths agree bit for bit");
}

static void test_elementwise(void)
{
    float a[10], b[10], bias[5];
    for (int i = 0; i < 10; i++) a[i] = (float)i - 4.5f, b[i] = (float)(i * i);
    for (int i = 0; i < 5; i++) bias[i] = (float)i;
    float r[10];
    memcpy(r, a, sizeof a);
    fy_relu(r, 10);
    int ok = 1;
    for (int i = 0; i < 10; i++) ok &= r[i] == (a[i] > 0 ? a[i] : 0.0f);
    CHECK(ok, "relu");
    memcpy(r, a, sizeof a);
    fy_add(r, b, 10);
    ok = 1;
    for (int i = 0; i < 10; i++) ok &= r[i] == a[i] + b[i];
    CHECK(ok, "add");
    memcpy(r, a, sizeof a);
    fy_add_bias(r, 2, 5, bias);
    ok = 1;
    for (int i = 0; i < 10; i++) ok &= r[i] == a[i] + bias[i % 5];
    CHECK(ok, "add_bias");
    memcpy(r, a, sizeof a);
    fy_scale(r, 10, 0.25f);
    ok = 1;
    for (int i = 0; i < 10; i++) ok &= r[i] == a[i] * 0.25f;
    CHECK(ok, "scale");
}

static void test_positional(void)
{
    const int d = 384, rows = 512;
    float *p = calloc((size_t)rows * d, sizeof(float));
    float *q = malloc(sizeof(float) * rows * d);
    fy_positional_add(p, rows, d, 0);
    fy_positional_fill(q, rows, d, 0);
    CHECK(memcmp(p, q, sizeof(float) * rows * d) == 0, "positional add onto zeros == fill");
    int ok = 1;
    for (int i = 0; i < d / 2; i++) ok &= p[i] == 0.0f && p[d / 2 + i] == 1.0f;
    CHECK(ok, "position 0: sin 0 then cos 1");
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
    CHECK(worst <= TOL_POS, "positions vs double formula: %.3g > %g", worst, TOL_POS);
    CHECK(differ == 0, "positions vs Marian's float steps: %d of %d differ", differ, rows * d);
    /* start_pos shifts rows */
    fy_positional_fill(q, 3, d, 7);
    CHECK(memcmp(q, p + 7 * d, sizeof(float) * 3 * d) == 0, "start_pos 7 == rows 7..9");
    free(p);
    free(q);
}

int main(void)
{
    test_exp();
    test_layer_norm();
    test_softmax();
    test_sigmoid();
    test_elementwise();
    test_positional();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
