/* gemm_avx512vnni.c - AVX-512 kernels (compiled with -mavx512f -mavx512bw
 * -mavx512vl -mavx512vnni; nothing else here).
 *
 * int8: same layout and arithmetic as gemm_avx2.c with 64 k-values per
 * vpmaddubsw (pairs saturated to int16, as the reference), and the widening
 * add done by one VNNI vpdpwssd against ones (exact: each int16 pair sum
 * times 1, added in int32). vpdpbusd is deliberately not used: it sums four
 * products without saturation and would differ from the reference.
 * Register tile: 4 rows x 4 columns or 1 row x 8 columns.
 *
 * float32: panels of 16 columns = one zmm; vmulps then vaddps (no FMA),
 * in k order, so results equal gemm_ref.c's.
 */
#include <immintrin.h>

#include "nn/gemm_impl.h"

#define INLINE static inline __attribute__((always_inline))

static void avx512_quantize_u8(const float *x, size_t count, float mult, uint8_t *out)
{
    const __m512 m = _mm512_set1_ps(mult);
    const __m512i neg127 = _mm512_set1_epi8(-127), pos127 = _mm512_set1_epi8(127);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (size_t i = 0; i < count; i += 64) {
        __m512i g0 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i), m));
        __m512i g1 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i + 16), m));
        __m512i g2 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i + 32), m));
        __m512i g3 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i + 48), m));
        __m512i p = _mm512_packs_epi16(_mm512_packs_epi32(g0, g1), _mm512_packs_epi32(g2, g3));
        /* packs works within 128-bit lanes: lane l holds 4-byte groups of
         * g0..g3 elements 4l..4l+3; gather them back into order. */
        p = _mm512_permutexvar_epi32(order, p);
        p = _mm512_add_epi8(_mm512_max_epi8(p, neg127), pos127);
        _mm512_storeu_si512((void *)(out + i), p);
    }
}

INLINE __m128i avx512_reduce4(__m512i s0, __m512i s1, __m512i s2, __m512i s3)
{
#define HALF(s) _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1))
    __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(HALF(s0), HALF(s1)),
                                  _mm256_hadd_epi32(HALF(s2), HALF(s3)));
#undef HALF
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

INLINE void avx512_i8_tile(const uint8_t *a, int k, const int8_t *const *wr, const int R,
                           const int C, int32_t out[4][8])
{
    const __m512i ones = _mm512_set1_epi16(1);
    __m512i acc[4][8];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = _mm512_setzero_si512();
    for (int kk = 0; kk < k; kk += 64) {
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m512i av = _mm512_loadu_si512((const void *)(a + (size_t)r * k + kk));
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                __m512i b = _mm512_loadu_si512((const void *)(wr[c] + kk));
                acc[r][c] = _mm512_dpwssd_epi32(acc[r][c], _mm512_maddubs_epi16(av, b), ones);
            }
        }
    }
    const __m512i z = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 2
        for (int g = 0; g < C; g += 4) {
            __m128i s =
                avx512_reduce4(acc[r][g], g + 1 < C ? acc[r][g + 1] : z,
                               g + 2 < C ? acc[r][g + 2] : z, g + 3 < C ? acc[r][g + 3] : z);
            int32_t tmp[4];
            _mm_storeu_si128((__m128i *)tmp, s);
            for (int c = g; c < C && c < g + 4; c++) out[r][c] = tmp[c - g];
        }
    }
}

INLINE void avx512_i8_rows(const uint8_t *a, int k, const int8_t *w, const int32_t *cols, int ncols,
                           float unquant, const float *bias, float *y, int ldy, const int R,
                           const int C)
{
    int32_t out[4][8];
    const int8_t *wr[8];
    int c0 = 0;
    while (c0 < ncols) {
        int n = ncols - c0 >= C ? C : 1;
        for (int c = 0; c < n; c++) wr[c] = w + (size_t)(cols ? cols[c0 + c] : c0 + c) * k;
        if (n == C)
            avx512_i8_tile(a, k, wr, R, C, out);
        else
            avx512_i8_tile(a, k, wr, R, 1, out);
        for (int r = 0; r < R; r++) {
            for (int c = 0; c < n; c++) {
                int32_t j = cols ? cols[c0 + c] : c0 + c;
                y[(size_t)r * ldy + c0 + c] = (float)out[r][c] * unquant + bias[j];
            }
        }
        c0 += n;
    }
}

static void avx512_i8_gemm(const uint8_t *a, int m, int k, const int8_t *w, const int32_t *cols,
                           int ncols, float unquant, const float *bias, float *y, int ldy)
{
    int i = 0;
    for (; i + 4 <= m; i += 4)
        avx512_i8_rows(a + (size_t)i * k, k, w, cols, ncols, unquant, bias, y + (size_t)i * ldy,
                       ldy, 4, 4);
    const uint8_t *ar = a + (size_t)i * k;
    float *yr = y + (size_t)i * ldy;
    switch (m - i) {
    case 3:
        avx512_i8_rows(ar, k, w, cols, ncols, unquant, bias, yr, ldy, 3, 4);
        break;
    case 2:
        avx512_i8_rows(ar, k, w, cols, ncols, unquant, bias, yr, ldy, 2, 4);
        break;
    case 1:
        avx512_i8_rows(ar, k, w, cols, ncols, unquant, bias, yr, ldy, 1, 8);
        break;
    default:
        break;
    }
}

/* R rows x P panels (one zmm each): R·P accumulators (at most 16). */
INLINE void avx512_f32_tile(const float *x, int k, const float *panel, const int R, const int P,
                            const float *bias, float *y, int ldy, int ncols)
{
    __m512 acc[8][8];
    const size_t ps = (size_t)k * FY_F32_PANEL;
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) acc[r][p] = _mm512_setzero_ps();
    for (int kk = 0; kk < k; kk++) {
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m512 xb = _mm512_set1_ps(x[(size_t)r * k + kk]);
#pragma GCC unroll 8
            for (int p = 0; p < P; p++) {
                __m512 wv = _mm512_loadu_ps(panel + p * ps + (size_t)kk * FY_F32_PANEL);
                acc[r][p] = _mm512_add_ps(acc[r][p], _mm512_mul_ps(xb, wv));
            }
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) {
            float tmp[16];
            _mm512_storeu_ps(tmp, acc[r][p]);
            for (int l = 0; l < 16 && p * 16 + l < ncols; l++) {
                float v = tmp[l];
                if (bias) v = v + bias[p * 16 + l];
                y[(size_t)r * ldy + p * 16 + l] = v;
            }
        }
    }
}

INLINE void avx512_f32_rows(const float *x, int k, const float *panels, int ncols,
                            const float *bias, float *y, int ldy, const int R, const int P)
{
    const int np = (ncols + FY_F32_PANEL - 1) / FY_F32_PANEL;
    for (int p0 = 0; p0 < np;) {
        int n = np - p0 >= P ? P : 1;
        int c0 = p0 * FY_F32_PANEL;
        const float *pp = panels + (size_t)p0 * k * FY_F32_PANEL;
        const float *bb = bias ? bias + c0 : NULL;
        if (n == P)
            avx512_f32_tile(x, k, pp, R, P, bb, y + c0, ldy, ncols - c0);
        else
            avx512_f32_tile(x, k, pp, R, 1, bb, y + c0, ldy, ncols - c0);
        p0 += n;
    }
}

static void avx512_f32_gemm(const float *x, int m, int k, const float *panels, int ncols,
                            const float *bias, float *y, int ldy)
{
    int i = 0;
    for (; i + 8 <= m; i += 8)
        avx512_f32_rows(x + (size_t)i * k, k, panels, ncols, bias, y + (size_t)i * ldy, ldy, 8, 2);
    const float *xr = x + (size_t)i * k;
    float *yr = y + (size_t)i * ldy;
    switch (m - i) {
    case 7:
        avx512_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 7, 2);
        break;
    case 6:
        avx512_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 6, 2);
        break;
    case 5:
        avx512_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 5, 3);
        break;
    case 4:
        avx512_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 4, 4);
        break;
    case 3:
        avx512_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 3, 5);
        break;
    case 2:
        avx512_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 2, 8);
        break;
    case 1:
        avx512_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 1, 8);
        break;
    default:
        break;
    }
}

const fy_gemm_kernels fy_gemm_avx512vnni = {
    .isa = FY_ISA_AVX512VNNI,
    .quantize_u8 = avx512_quantize_u8,
    .i8_gemm = avx512_i8_gemm,
    .f32_gemm = avx512_f32_gemm,
    .attend = fy_attend_avx2,
};
