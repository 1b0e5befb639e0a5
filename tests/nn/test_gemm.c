/* test_gemm.c - the linear-layer kernels against their specification.
 *
 * For every kernel path this CPU supports: int8 results bit-identical to
 * gemm_ref (and exact integers equal to an independent pair-saturating sum),
 * the int16 pair saturation reproduced (a case where it changes the sum),
 * the VNNI product with its saturation fixes (weights with a few pairs that
 * can saturate, activations all 254, all 0, alternating and random) equal
 * to the reference, the count of pairs that can saturate,
 * column subsets equal to the full product, float32 results identical
 * across paths and close to a double-precision product, and gemm_ref close
 * to the real-valued formula it implements.
 *
 * Usage: test_nn_gemm [--expect-env-isa]  (the second form checks that
 * FANYI_KERNEL chose the path, used by a CTest with that variable set).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/cpu.h"
#include "nn/gemm.h"
#include "nn/gemm_impl.h"
#include "../check.h"
#include "../xorshift.h"

/* gemm_ref vs the real-valued int8 formula (double), relative to the sum of
 * absolute terms: covers float32 rounding of bias', unquant and the output. */
#define TOL_I8_FORMULA 1e-5
/* float32 linear vs a double-precision product, relative to sum |x·w|. */
#define TOL_F32 1e-5

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
    return xorshift_next(&rng_state);
}

static float frand(float lo, float hi)
{
    return lo + (hi - lo) * (float)(rnd() % 1000001) / 1000000.0f;
}

static void *xmalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static fy_isa isas[4];
static int nisas;
static int one_row; /* run_i8 prepares its layers for one row */

/* How many times to run a path: twice on AVX-512, the second time with
 * its layers prepared for one row (fy_linear_prepare_one_row). */
static int one_row_variants(fy_isa isa)
{
    return isa == FY_ISA_AVX512VNNI ? 2 : 1;
}

/* Output of layer creation + forward on a forced path. */
static float *run_i8(fy_isa isa, const int8_t *w, int n, int k, float wm, float am,
                     const float *bias, const float *x, int m, const int32_t *cols, int ncols)
{
    fy_cpu_force_isa(isa);
    fy_error err = {0};
    fy_linear *l = fy_linear_new_i8(w, n, k, wm, am, bias, &err);
    if (!l || (one_row && fy_linear_prepare_one_row(l, &err) < 0)) {
        printf("fy_linear_new_i8: %s\n", err.msg);
        exit(2);
    }
    int nc = cols ? ncols : n;
    float *y = xmalloc((size_t)m * nc * sizeof(float));
    void *scratch = xmalloc(fy_linear_scratch_bytes(l, m));
    fy_linear_forward(l, x, m, cols, ncols, scratch, y);
    free(scratch);
    fy_linear_free(l);
    return y;
}

/* The spec, written independently of gemm_ref.c: quantise, pair-saturate. */
static int32_t spec_acc(const float *x, const int8_t *w, int k, float am)
{
    int32_t acc = 0;
    for (int kk = 0; kk < k; kk += 2) {
        int32_t s = 0;
        for (int t = 0; t < 2; t++) {
            float v = x[kk + t] * am;
            long q = (fabsf(v) < 2147483648.0f) ? lrintf(v) : -2147483647L - 1;
            q = q < -127 ? -127 : q > 127 ? 127 : q;
            s += (int32_t)(q + 127) * w[kk + t];
        }
        acc += s > 32767 ? 32767 : s < -32768 ? -32768 : s;
    }
    return acc;
}

static void random_i8(int8_t *w, size_t count, int range)
{
    for (size_t i = 0; i < count; i++) w[i] = (int8_t)((int)(rnd() % (2 * range + 1)) - range);
}

/* One random shape: every path bit-identical to ref; with a_mult = w_mult
 * = 1 and no bias the outputs are exact integers acc - 127·colsum, checked
 * against the spec's own accumulation. */
static void test_i8_shape(int m, int n, int k, int ncols_subset)
{
    int8_t *w = xmalloc((size_t)n * k);
    float *x = xmalloc((size_t)m * k * sizeof(float));
    float *bias = xmalloc((size_t)n * sizeof(float));
    random_i8(w, (size_t)n * k, 127);
    for (size_t i = 0; i < (size_t)m * k; i++) x[i] = frand(-140.0f, 140.0f);
    for (int j = 0; j < n; j++) bias[j] = frand(-1.0f, 1.0f);
    int32_t *cols = NULL;
    int ncols = n;
    if (ncols_subset) {
        cols = xmalloc((size_t)n * sizeof(int32_t));
        ncols = 0;
        for (int j = 0; j < n; j++)
            if ((int)(rnd() % n) < ncols_subset) cols[ncols++] = j;
        if (ncols == 0) cols[ncols++] = n - 1;
    }
    /* integer check */
    float *yi = run_i8(FY_ISA_REF, w, n, k, 1.0f, 1.0f, NULL, x, m, cols, ncols);
    int bad = 0;
    for (int i = 0; i < m && !bad; i++) {
        for (int c = 0; c < ncols; c++) {
            int j = cols ? cols[c] : c;
            int32_t colsum = 0;
            for (int kk = 0; kk < k; kk++) colsum += w[(size_t)j * k + kk];
            int32_t want = spec_acc(x + (size_t)i * k, w + (size_t)j * k, k, 1.0f) - 127 * colsum;
            if (yi[(size_t)i * ncols + c] != (float)want) {
                bad = 1;
                printf("  ref int (%d,%d): %g want %d\n", i, j, yi[(size_t)i * ncols + c], want);
                break;
            }
        }
    }
    CHECKF(!bad, "ref exact integers m=%d n=%d k=%d ncols=%d", m, n, k, ncols);
    float am = frand(0.5f, 2.0f), wm = frand(0.01f, 3.0f);
    float *yref = run_i8(FY_ISA_REF, w, n, k, wm, am, bias, x, m, cols, ncols);
    for (int p = 1; p < nisas; p++) {
        float *y1 = run_i8(isas[p], w, n, k, 1.0f, 1.0f, NULL, x, m, cols, ncols);
        float *y2 = run_i8(isas[p], w, n, k, wm, am, bias, x, m, cols, ncols);
        size_t bytes = (size_t)m * ncols * sizeof(float);
        CHECKF(memcmp(y1, yi, bytes) == 0, "%s int32 == ref m=%d n=%d k=%d ncols=%d",
               fy_isa_name(isas[p]), m, n, k, ncols);
        CHECKF(memcmp(y2, yref, bytes) == 0, "%s float == ref m=%d n=%d k=%d ncols=%d",
               fy_isa_name(isas[p]), m, n, k, ncols);
        free(y1);
        free(y2);
    }
    /* a subset's values equal the same columns of the full product */
    if (cols) {
        for (int p = 0; p < nisas; p++) {
            float *yf = run_i8(isas[p], w, n, k, wm, am, bias, x, m, NULL, 0);
            int same = 1;
            for (int i = 0; i < m; i++)
                for (int c = 0; c < ncols; c++)
                    same &= yf[(size_t)i * n + cols[c]] == yref[(size_t)i * ncols + c];
            CHECKF(same, "%s subset == full columns n=%d k=%d", fy_isa_name(isas[p]), n, k);
            free(yf);
        }
    }
    free(yref);
    free(yi);
    free(cols);
    free(w);
    free(x);
    free(bias);
}

/* All pairs saturate: 254·127 + 254·127 = 64516 -> 32767 (and -32768). */
static void test_saturation(void)
{
    const int m = 2, n = 16, k = 256;
    int8_t *w = xmalloc((size_t)n * k);
    float *x = xmalloc((size_t)m * k * sizeof(float));
    for (int j = 0; j < n; j++)
        for (int kk = 0; kk < k; kk++) w[(size_t)j * k + kk] = (int8_t)(j % 2 ? -127 : 127);
    for (int i = 0; i < m * k; i++) x[i] = 127.0f; /* u = 254 */
    for (int p = 0; p < nisas; p++) {
        float *y = run_i8(isas[p], w, n, k, 1.0f, 1.0f, NULL, x, m, NULL, 0);
        /* y = acc - 127·colsum; colsum = ±127·k */
        float sat_pos = (float)(k / 2 * 32767) - 127.0f * (127.0f * k);
        float sat_neg = (float)(k / 2 * -32768) + 127.0f * (127.0f * k);
        float exact_pos = (float)(k * 254 * 127) - 127.0f * (127.0f * k);
        int ok = 1;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) ok &= y[i * n + j] == (j % 2 ? sat_neg : sat_pos);
        CHECKF(ok, "%s reproduces int16 pair saturation (got %g, want %g)", fy_isa_name(isas[p]),
               y[0], sat_pos);
        CHECKF(y[0] != exact_pos, "%s saturated sum differs from the exact sum %g",
               fy_isa_name(isas[p]), exact_pos);
        free(y);
    }
    free(w);
    free(x);
}

/* Weights like trained ones, |w| <= 40 (no pair can saturate), with
 * `risky` pairs of one sign and |w0| + |w1| in [130, 255] at random places
 * (some in the same column, some at k's ends). */
static void trained_i8(int8_t *w, int n, int k, int risky)
{
    for (size_t i = 0; i < (size_t)n * k; i++) w[i] = (int8_t)((int)(rnd() % 81) - 40);
    for (int e = 0; e < risky; e++) {
        int j = e % 3 == 2 ? 0 : (int)(rnd() % n);
        int p = e % 5 == 4 ? k / 2 - 1 : e % 5 == 3 ? 0 : (int)(rnd() % (k / 2));
        int sum = 130 + (int)(rnd() % 126), w0 = sum / 2 + (int)(rnd() % 3) - 1;
        int sign = rnd() % 2 ? -1 : 1;
        if (w0 > 127) w0 = 127;
        if (sum - w0 > 127) w0 = sum - 127;
        w[(size_t)j * k + 2 * p] = (int8_t)(sign * w0);
        w[(size_t)j * k + 2 * p + 1] = (int8_t)(sign * (sum - w0));
    }
    if (risky > 0 && n > 1) { /* and one -128 pair, which the file format allows */
        w[(size_t)(n - 1) * k + 2] = -128;
        w[(size_t)(n - 1) * k + 3] = -128;
    }
}

/* Activations whose quantised values (a_mult 1) are: 0 random, 1 all 254,
 * 2 all 0, 3 254 and 0 alternating, 4 0 and 254 alternating. */
static void adversarial_x(float *x, size_t count, int pattern)
{
    for (size_t i = 0; i < count; i++) {
        float v = frand(-140.0f, 140.0f);
        if (pattern == 1) v = 127.0f;
        if (pattern == 2) v = -127.0f;
        if (pattern == 3) v = i % 2 ? -127.0f : 127.0f;
        if (pattern == 4) v = i % 2 ? 127.0f : -127.0f;
        x[i] = v;
    }
}

/* The VNNI product with saturation fixes: on every path, trained-like
 * weights (taking the VNNI product where the path has it) give the
 * reference's bits and the spec's integers on adversarial activations. */
static void test_vnni_exact(int m, int n, int k, int risky, int subset)
{
    int8_t *w = xmalloc((size_t)n * k);
    float *x = xmalloc((size_t)m * k * sizeof(float));
    float *bias = xmalloc((size_t)n * sizeof(float));
    int32_t *cols = xmalloc((size_t)n * sizeof(int32_t));
    trained_i8(w, n, k, risky);
    for (int j = 0; j < n; j++) bias[j] = frand(-1.0f, 1.0f);
    int ncols = n;
    if (subset) {
        ncols = 0;
        for (int j = 0; j < n; j++)
            if (j == 0 || j == n - 1 || rnd() % 3 == 0) cols[ncols++] = j;
    }
    const int32_t *c = subset ? cols : NULL;
    size_t want = fy_i8_saturating_pairs(w, (size_t)n, k), brute = 0;
    for (size_t i = 0; i < (size_t)n * k; i += 2) brute += abs(w[i] + w[i + 1]) > 129;
    CHECKF(want == brute, "saturating pairs counted: %zu, brute force %zu", want, brute);
    for (int pattern = 0; pattern < 5; pattern++) {
        adversarial_x(x, (size_t)m * k, pattern);
        float *yi = run_i8(FY_ISA_REF, w, n, k, 1.0f, 1.0f, NULL, x, m, c, ncols);
        int bad = 0;
        for (int i = 0; i < m && !bad; i++)
            for (int cc = 0; cc < ncols && !bad; cc++) {
                int j = c ? c[cc] : cc;
                int32_t colsum = 0;
                for (int kk = 0; kk < k; kk++) colsum += w[(size_t)j * k + kk];
                int32_t acc = spec_acc(x + (size_t)i * k, w + (size_t)j * k, k, 1.0f);
                bad = yi[(size_t)i * ncols + cc] != (float)(acc - 127 * colsum);
            }
        CHECKF(!bad, "ref exact integers, trained weights, pattern %d", pattern);
        float *yref = run_i8(FY_ISA_REF, w, n, k, 0.37f, 1.3f, bias, x, m, c, ncols);
        for (int p = 1; p < nisas; p++) {
            fy_cpu_force_isa(isas[p]);
            fy_linear *l = fy_linear_new_i8(w, n, k, 0.37f, 1.3f, bias, NULL);
            int vnni_path = isas[p] == FY_ISA_AVXVNNI || isas[p] == FY_ISA_AVX512VNNI;
            CHECKF(l && fy_linear_vnni(l) == vnni_path && fy_linear_sat_pairs(l) == want,
                   "%s: trained weights (%zu of %d pairs can saturate) take the VNNI product "
                   "where there is one",
                   fy_isa_name(isas[p]), want, n * k / 2);
            fy_linear_free(l);
            for (one_row = 0; one_row < one_row_variants(isas[p]); one_row++) {
                float *y1 = run_i8(isas[p], w, n, k, 1.0f, 1.0f, NULL, x, m, c, ncols);
                float *y2 = run_i8(isas[p], w, n, k, 0.37f, 1.3f, bias, x, m, c, ncols);
                size_t bytes = (size_t)m * ncols * sizeof(float);
                CHECKF(!memcmp(y1, yi, bytes) && !memcmp(y2, yref, bytes),
                       "%s%s == ref, trained weights (%zu pairs can saturate), pattern %d, m=%d "
                       "n=%d k=%d ncols=%d",
                       fy_isa_name(isas[p]), one_row ? " (one-row layout)" : "", want, pattern, m,
                       n, k, ncols);
                free(y1);
                free(y2);
            }
            one_row = 0;
        }
        free(yi);
        free(yref);
    }
    free(w);
    free(x);
    free(bias);
    free(cols);
}

/* The one-row copy exists on AVX-512 for layers on the VNNI product with
 * n % 128 == 0, nowhere else, and is made once. */
static void test_one_row_copy(void)
{
    static const int ns[] = {128, 384, 2048, 8, 136, 520};
    int8_t *w[2] = {xmalloc((size_t)2048 * 256), xmalloc((size_t)2048 * 256)};
    random_i8(w[0], (size_t)2048 * 256, 127); /* the saturating product */
    trained_i8(w[1], 2048, 256, 20);          /* VNNI */
    for (int p = 0; p < nisas; p++) {
        fy_cpu_force_isa(isas[p]);
        for (int t = 0; t < 2; t++)
            for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
                fy_error err = {0};
                fy_linear *l = fy_linear_new_i8(w[t], ns[i], 256, 1.0f, 1.0f, NULL, &err);
                int ok = l && fy_linear_prepare_one_row(l, &err) == 0 &&
                         fy_linear_prepare_one_row(l, &err) == 0;
                int copy = isas[p] == FY_ISA_AVX512VNNI && t == 1 && ns[i] % 128 == 0;
                size_t want = copy ? (size_t)ns[i] * 256 : 0;
                CHECKF(ok && fy_linear_one_row_bytes(l) == want,
                       "%s, %s weights, n=%d: one-row copy of %zu bytes (want %zu)",
                       fy_isa_name(isas[p]), t ? "trained" : "uniform", ns[i],
                       fy_linear_one_row_bytes(l), want);
                fy_linear_free(l);
            }
    }
    CHECK(fy_linear_one_row_bytes(NULL) == 0 && fy_linear_prepare_one_row(NULL, NULL) == 0);
    free(w[0]);
    free(w[1]);
}

/* Uniform weights (a quarter of the pairs can saturate) keep the
 * saturating product; a layer with no such pair takes VNNI. */
static void test_vnni_choice(void)
{
    const int n = 64, k = 256;
    int8_t *w = xmalloc((size_t)n * k);
    random_i8(w, (size_t)n * k, 127);
    for (int p = 0; p < nisas; p++) {
        int vnni_path = isas[p] == FY_ISA_AVXVNNI || isas[p] == FY_ISA_AVX512VNNI;
        fy_cpu_force_isa(isas[p]);
        fy_linear *l = fy_linear_new_i8(w, n, k, 1.0f, 1.0f, NULL, NULL);
        size_t pairs = fy_linear_sat_pairs(l);
        CHECKF(!fy_linear_vnni(l) && pairs > (size_t)n * k / 2 / 5,
               "%s: uniform weights (%zu of %d pairs can saturate) keep the saturating product",
               fy_isa_name(isas[p]), pairs, n * k / 2);
        fy_linear_free(l);
        for (int i = 0; i < n * k; i++) w[i] = (int8_t)(w[i] / 2); /* |w0 + w1| <= 126 */
        l = fy_linear_new_i8(w, n, k, 1.0f, 1.0f, NULL, NULL);
        CHECKF(fy_linear_vnni(l) == vnni_path && fy_linear_sat_pairs(l) == 0,
               "%s: no pair can saturate: VNNI where the path has it", fy_isa_name(isas[p]));
        fy_linear_free(l);
        random_i8(w, (size_t)n * k, 127);
    }
    free(w);
}

/* Quantisation edge cases: halves round to even, saturation, out of range
 * (cvtps gives INT32_MIN -> -127), NaN. */
static void test_quantize(void)
{
    static const float special[] = {0.5f,    1.5f,    2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 127.5f,
                                    -127.5f, -128.0f, 1e9f, -1e9f, 3e9f,  -3e9f, 0.0f,   -0.0f};
    const size_t count = 128;
    float x[128];
    uint8_t q[4][128]; /* one per path (isas) */
    for (size_t i = 0; i < count; i++)
        x[i] = i < sizeof special / sizeof *special ? special[i] : frand(-300.0f, 300.0f);
    x[20] = NAN;
    for (int p = 0; p < nisas; p++) fy_gemm_kernels_for(isas[p])->quantize_u8(x, count, 1.0f, q[p]);
    static const uint8_t want[16] = {127, 129, 129, 127, 125, 125, 253, 254,
                                     0,   0,   254, 0,   0,   0,   127, 127};
    CHECKF(memcmp(q[0], want, 16) == 0, "ref quantisation of special values");
    CHECKF(q[0][20] == 0, "ref quantises NaN to 0 (cvtps semantics)");
    for (int p = 1; p < nisas; p++)
        CHECKF(memcmp(q[p], q[0], count) == 0, "%s quantisation == ref", fy_isa_name(isas[p]));
}

/* gemm_ref against the real-valued formula y = sum(q·w)/(a·wm) + b with
 * weights in [-63, 63] so that no pair can saturate. */
static void test_ref_formula(void)
{
    const int m = 5, n = 64, k = 512;
    int8_t *w = xmalloc((size_t)n * k);
    float *x = xmalloc((size_t)m * k * sizeof(float));
    float bias[64];
    random_i8(w, (size_t)n * k, 63);
    float am = 3.7f, wm = 0.85f;
    for (int i = 0; i < m * k; i++) x[i] = frand(-40.0f, 40.0f);
    for (int j = 0; j < n; j++) bias[j] = frand(-2.0f, 2.0f);
    float *y = run_i8(FY_ISA_REF, w, n, k, wm, am, bias, x, m, NULL, 0);
    double worst = 0;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            double s = 0, mag = fabs(bias[j]);
            for (int kk = 0; kk < k; kk++) {
                double q = rint((double)(x[i * k + kk] * am));
                q = q < -127 ? -127 : q > 127 ? 127 : q;
                double t = q * w[(size_t)j * k + kk] / ((double)am * wm);
                s += t;
                mag += fabs(t) + 127.0 * abs(w[(size_t)j * k + kk]) / ((double)am * wm);
            }
            double e = fabs(y[i * n + j] - (s + bias[j])) / mag;
            if (e > worst) worst = e;
        }
    }
    CHECKF(worst <= TOL_I8_FORMULA, "ref vs real formula: relative error %.3g > %g", worst,
           TOL_I8_FORMULA);
    free(y);
    free(w);
    free(x);
}

static float *run_f32(fy_isa isa, const float *w, int k, int n, const float *bias, const float *x,
                      int m, const int32_t *cols, int ncols, int nk_layout)
{
    fy_cpu_force_isa(isa);
    fy_error err = {0};
    fy_linear *l = nk_layout ? fy_linear_new_f32_nk(w, n, k, bias, &err)
                             : fy_linear_new_f32(w, k, n, bias, &err);
    if (!l) {
        printf("fy_linear_new_f32: %s\n", err.msg);
        exit(2);
    }
    int nc = cols ? ncols : n;
    float *y = xmalloc((size_t)m * nc * sizeof(float));
    void *scratch = xmalloc(fy_linear_scratch_bytes(l, m));
    fy_linear_forward(l, x, m, cols, ncols, scratch, y);
    free(scratch);
    fy_linear_free(l);
    return y;
}

static void test_f32_shape(int m, int k, int n, int subset)
{
    float *w = xmalloc((size_t)k * n * sizeof(float));
    float *wt = xmalloc((size_t)k * n * sizeof(float));
    float *x = xmalloc((size_t)m * k * sizeof(float));
    float *bias = xmalloc((size_t)n * sizeof(float));
    for (size_t i = 0; i < (size_t)k * n; i++) w[i] = frand(-1.0f, 1.0f);
    for (int kk = 0; kk < k; kk++)
        for (int j = 0; j < n; j++) wt[(size_t)j * k + kk] = w[(size_t)kk * n + j];
    for (size_t i = 0; i < (size_t)m * k; i++) x[i] = frand(-2.0f, 2.0f);
    for (int j = 0; j < n; j++) bias[j] = frand(-1.0f, 1.0f);
    int32_t *cols = NULL;
    int ncols = n;
    if (subset) {
        cols = xmalloc((size_t)n * sizeof(int32_t));
        ncols = 0;
        for (int j = 0; j < n; j++)
            if ((int)(rnd() % n) < subset) cols[ncols++] = j;
        if (!ncols) cols[ncols++] = 0;
    }
    float *yref = run_f32(FY_ISA_REF, w, k, n, bias, x, m, cols, ncols, 0);
    double worst = 0;
    for (int i = 0; i < m; i++) {
        for (int c = 0; c < ncols; c++) {
            int j = cols ? cols[c] : c;
            double s = bias[j], mag = fabs(bias[j]);
            for (int kk = 0; kk < k; kk++) {
                double t = (double)x[(size_t)i * k + kk] * w[(size_t)kk * n + j];
                s += t;
                mag += fabs(t);
            }
            double e = fabs(yref[(size_t)i * ncols + c] - s) / mag;
            if (e > worst) worst = e;
        }
    }
    CHECKF(worst <= TOL_F32, "f32 ref vs double m=%d k=%d n=%d: %.3g > %g", m, k, n, worst,
           TOL_F32);
    size_t bytes = (size_t)m * ncols * sizeof(float);
    for (int p = 0; p < nisas; p++) {
        float *y = run_f32(isas[p], w, k, n, bias, x, m, cols, ncols, 0);
        float *y2 = run_f32(isas[p], wt, k, n, bias, x, m, cols, ncols, 1);
        CHECKF(memcmp(y, yref, bytes) == 0, "%s f32 == ref m=%d k=%d n=%d ncols=%d",
               fy_isa_name(isas[p]), m, k, n, ncols);
        CHECKF(memcmp(y2, yref, bytes) == 0, "%s f32 [n][k] layout == ref m=%d k=%d n=%d",
               fy_isa_name(isas[p]), m, k, n);
        free(y);
        free(y2);
    }
    free(yref);
    free(cols);
    free(w);
    free(wt);
    free(x);
    free(bias);
}

/* fy_linear_view_i8 reads aligned weights in place and copies unaligned
 * ones; either way it computes what fy_linear_new_i8 computes. */
static void test_view_i8(void)
{
    const int m = 3, n = 40, k = 192;
    int8_t *buf = aligned_alloc(64, (size_t)n * k + 64);
    float *x = xmalloc(sizeof(float) * m * k), *y = xmalloc(sizeof(float) * m * n);
    for (int i = 0; i < m * k; i++) x[i] = frand(-3.0f, 3.0f);
    for (int off = 0; off <= 1; off++) {
        int8_t *w = buf + off;
        random_i8(w, (size_t)n * k, 127);
        for (int p = 0; p < nisas; p++) {
            float *want = run_i8(isas[p], w, n, k, 0.5f, 9.0f, NULL, x, m, NULL, 0);
            fy_cpu_force_isa(isas[p]);
            fy_linear *l = fy_linear_view_i8(w, n, k, 0.5f, 9.0f, NULL, NULL);
            void *scratch = xmalloc(fy_linear_scratch_bytes(l, m));
            fy_linear_forward(l, x, m, NULL, 0, scratch, y);
            CHECKF(memcmp(y, want, sizeof(float) * m * n) == 0, "%s view_i8 (%s) == new_i8",
                   fy_isa_name(isas[p]), off ? "unaligned, copied" : "aligned, in place");
            free(scratch);
            free(want);
            fy_linear_free(l);
        }
    }
    free(buf);
    free(x);
    free(y);
}

/* Two column ranges written side by side with ldy == the full product. */
static void test_forward_ex(void)
{
    const int m = 5, n = 64, k = 128, ldy = 70;
    int8_t *w8 = xmalloc((size_t)n * k);
    float *wf = xmalloc(sizeof(float) * n * k), *x = xmalloc(sizeof(float) * m * k);
    float *y = xmalloc(sizeof(float) * m * ldy);
    int32_t lo[24], hi[40];
    random_i8(w8, (size_t)n * k, 127);
    for (int i = 0; i < n * k; i++) wf[i] = frand(-1.0f, 1.0f);
    for (int i = 0; i < m * k; i++) x[i] = frand(-3.0f, 3.0f);
    for (int j = 0; j < 24; j++) lo[j] = j;
    for (int j = 0; j < 40; j++) hi[j] = 24 + j;
    for (int p = 0; p < nisas; p++) {
        fy_cpu_force_isa(isas[p]);
        for (int t = 0; t < 2; t++) {
            fy_linear *l = t ? fy_linear_new_f32(wf, k, n, NULL, NULL)
                             : fy_linear_new_i8(w8, n, k, 0.5f, 9.0f, NULL, NULL);
            float *full = t ? run_f32(isas[p], wf, k, n, NULL, x, m, NULL, 0, 0)
                            : run_i8(isas[p], w8, n, k, 0.5f, 9.0f, NULL, x, m, NULL, 0);
            void *scratch = xmalloc(fy_linear_scratch_bytes(l, m));
            for (int i = 0; i < m * ldy; i++) y[i] = -7.0f;
            fy_linear_forward_ex(l, x, m, lo, 24, scratch, y, ldy);
            fy_linear_forward_ex(l, x, m, hi, 40, scratch, y + 24, ldy);
            int ok = 1;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) ok &= y[i * ldy + j] == full[i * n + j];
                for (int j = n; j < ldy; j++) ok &= y[i * ldy + j] == -7.0f;
            }
            CHECKF(ok, "%s %s forward_ex by column ranges == full product", fy_isa_name(isas[p]),
                   t ? "f32" : "int8");
            free(scratch);
            free(full);
            fy_linear_free(l);
        }
    }
    free(w8);
    free(wf);
    free(x);
    free(y);
}

static void test_errors(void)
{
    int8_t w[64 * 8] = {0};
    float wf[4] = {0};
    fy_error err = {0};
    CHECKF(fy_linear_new_i8(w, 8, 32, 1.0f, 1.0f, NULL, &err) == NULL &&
               err.code == FY_EUNSUPPORTED,
           "k not a multiple of 64 is refused");
    CHECKF(fy_linear_new_i8(w, 4, 64, 1.0f, 1.0f, NULL, &err) == NULL &&
               err.code == FY_EUNSUPPORTED,
           "n not a multiple of 8 is refused");
    CHECKF(fy_linear_new_i8(w, 8, 64, 0.0f, 1.0f, NULL, &err) == NULL && err.code == FY_EINVAL,
           "zero w_mult is refused");
    CHECKF(fy_linear_new_i8(w, 8, 64, 1.0f, NAN, NULL, &err) == NULL && err.code == FY_EINVAL,
           "NaN a_mult is refused");
    CHECKF(fy_linear_new_f32(wf, 0, 4, NULL, &err) == NULL && err.code == FY_EINVAL,
           "empty float layer is refused");
    fy_linear_free(NULL);
    CHECKF(fy_cpu_force_isa((fy_isa)7) == FY_EUNSUPPORTED, "unknown ISA is refused");
    fy_isa parsed;
    CHECKF(fy_isa_parse("avx2", &parsed) == 0 && parsed == FY_ISA_AVX2, "parse avx2");
    CHECKF(fy_isa_parse("sse", &parsed) == FY_EINVAL, "parse rejects sse");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--expect-env-isa") == 0) {
        const char *env = getenv("FANYI_KERNEL");
        fy_isa want, got = fy_cpu_isa();
        if (!env || fy_isa_parse(env, &want) != 0 || !fy_cpu_supports(want)) {
            /* unknown or unsupported request: the automatic (best) choice */
            want = fy_cpu_supports(FY_ISA_AVX512VNNI) ? FY_ISA_AVX512VNNI
                   : fy_cpu_supports(FY_ISA_AVXVNNI)  ? FY_ISA_AVXVNNI
                   : fy_cpu_supports(FY_ISA_AVX2)     ? FY_ISA_AVX2
                                                      : FY_ISA_REF;
        }
        CHECKF(got == want, "FANYI_KERNEL=%s selects %s (got %s)", env ? env : "",
               fy_isa_name(want), fy_isa_name(got));
        printf("%d passed, %d failed\n", passed, failed);
        return failed != 0;
    }
    printf("selected path: %s; supported:", fy_isa_name(fy_cpu_isa()));
    /* A path that fails the start-up check is dropped, and would go
     * untested here. */
    for (int i = FY_ISA_REF; i <= FY_ISA_AVX512VNNI; i++)
        CHECKF(!fy_cpu_rejected((fy_isa)i), "the %s kernels failed the start-up check",
               fy_isa_name((fy_isa)i));
    for (int i = FY_ISA_REF; i <= FY_ISA_AVX512VNNI; i++) {
        if (fy_cpu_supports((fy_isa)i)) {
            isas[nisas++] = (fy_isa)i;
            printf(" %s", fy_isa_name((fy_isa)i));
        }
    }
    printf("\n");
    if (nisas < 4) printf("note: paths this CPU lacks are not tested here\n");

    test_errors();
    test_quantize();
    test_saturation();
    test_ref_formula();
    test_forward_ex();
    test_view_i8();
    test_vnni_choice();
    test_one_row_copy();
    static const int vshapes[][4] = {
        /* m, n, k, risky pairs: with the -128 pair at most one pair in 512 */
        {1, 8, 64, 0},       {1, 24, 128, 2},     {2, 40, 192, 6},      {3, 16, 128, 1},
        {4, 64, 256, 15},    {5, 384, 384, 140},  {7, 512, 512, 250},   {13, 48, 1536, 70},
        {64, 384, 384, 140}, {70, 128, 512, 60},  {1, 2048, 512, 1000}, {3, 512, 2048, 1000},
        {17, 96, 512, 20},   {24, 40, 384, 6},    {33, 64, 384, 10},    {40, 72, 256, 8},
        {1, 128, 64, 4},     {1, 256, 1536, 200}, {1, 384, 2048, 600},  {1, 640, 128, 30},
    };
    for (size_t s = 0; s < sizeof vshapes / sizeof *vshapes; s++)
        for (int subset = 0; subset < 2; subset++)
            test_vnni_exact(vshapes[s][0], vshapes[s][1], vshapes[s][2], vshapes[s][3], subset);
    static const int shapes[][2] = {{8, 64},     {16, 128},   {256, 256}, {384, 384},
                                    {1536, 384}, {384, 1536}, {512, 512}, {2048, 512},
                                    {512, 2048}, {24, 192},   {40, 320}};
    static const int ms[] = {1, 2, 3, 4, 5, 7, 8, 13, 17, 24, 33, 47, 64, 70};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
            if ((size_t)shapes[s][0] * shapes[s][1] * ms[i] > 40000000) continue;
            test_i8_shape(ms[i], shapes[s][0], shapes[s][1], 0);
        }
    for (int i = 0; i < 6; i++)
        test_i8_shape(1 + (int)(rnd() % 70), 8 * (1 + (int)(rnd() % 40)),
                      64 * (1 + (int)(rnd() % 8)), 0);
    /* the output layer with shortlist-like column subsets */
    test_i8_shape(1, 32000, 384, 400);
    test_i8_shape(5, 32000, 384, 1000);
    test_i8_shape(3, 384, 384, 100);

    static const int fshapes[][3] = {{1, 384, 384},  {7, 384, 1536}, {13, 1536, 384},
                                     {64, 384, 384}, {70, 256, 24},  {2, 5, 3},
                                     {3, 100, 17},   {9, 64, 48},    {6, 33, 130}};
    for (size_t s = 0; s < sizeof fshapes / sizeof *fshapes; s++)
        test_f32_shape(fshapes[s][0], fshapes[s][1], fshapes[s][2], 0);
    test_f32_shape(1, 384, 32000, 300);
    test_f32_shape(4, 384, 2000, 500);

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
