/* gemm_ref.c - the portable kernels: the specification every fast path must
 * reproduce bit for bit (see gemm.h and gemm_impl.h for the arithmetic).
 *
 * Written for clarity, not speed: it is the fallback on CPUs without AVX2
 * and the yardstick of the kernel tests.
 */
#include <math.h>

#include "nn/gemm_impl.h"

/* intgemm's QuantizerGrab: cvtps_epi32 of x·mult, which rounds half to even
 * and turns an out-of-range or NaN value into INT32_MIN; packs_epi32 and
 * packs_epi16 then saturate to int8 and -128 is banned (becomes -127). */
static void ref_quantize_u8(const float *x, size_t count, float mult, uint8_t *out)
{
    for (size_t i = 0; i < count; i++) {
        float v = x[i] * mult;
        int32_t q = INT32_MIN;
        if (v >= -2147483648.0f && v < 2147483648.0f) q = (int32_t)rintf(v);
        if (q < -127) q = -127;
        if (q > 127) q = 127;
        out[i] = (uint8_t)(q + 127);
    }
}

/* The pmaddubsw pair: u8·s8 + u8·s8 saturated to int16. */
static int32_t ref_pair(const uint8_t *a, const int8_t *b)
{
    int32_t s = (int32_t)a[0] * b[0] + (int32_t)a[1] * b[1];
    if (s > 32767) s = 32767;
    if (s < -32768) s = -32768;
    return s;
}

static void ref_i8_gemm(const uint8_t *a, int m, int k, const int8_t *w, const int32_t *cols,
                        int ncols, float unquant, const float *bias, float *y, int ldy)
{
    for (int i = 0; i < m; i++) {
        const uint8_t *ar = a + (size_t)i * k;
        for (int c = 0; c < ncols; c++) {
            int32_t j = cols ? cols[c] : c;
            const int8_t *wr = w + (size_t)j * k;
            int32_t acc = 0;
            for (int kk = 0; kk < k; kk += 2) acc += ref_pair(ar + kk, wr + kk);
            y[(size_t)i * ldy + c] = (float)acc * unquant + bias[j];
        }
    }
}

static void ref_f32_gemm(const float *x, int m, int k, const float *panels, int ncols,
                         const float *bias, float *y, int ldy)
{
    for (int i = 0; i < m; i++) {
        const float *xr = x + (size_t)i * k;
        for (int c = 0; c < ncols; c++) {
            const float *p =
                panels + (size_t)(c / FY_F32_PANEL) * k * FY_F32_PANEL + c % FY_F32_PANEL;
            float acc = 0.0f;
            for (int kk = 0; kk < k; kk++) acc = acc + xr[kk] * p[(size_t)kk * FY_F32_PANEL];
            if (bias) acc = acc + bias[c];
            y[(size_t)i * ldy + c] = acc;
        }
    }
}

const fy_gemm_kernels fy_gemm_ref = {
    .isa = FY_ISA_REF,
    .quantize_u8 = ref_quantize_u8,
    .i8_gemm = ref_i8_gemm,
    .i8_gemm_vnni = NULL,
    .f32_gemm = ref_f32_gemm,
    .attend = fy_attend_v4,
    .expf_row = fy_expf_row_v4,
};
