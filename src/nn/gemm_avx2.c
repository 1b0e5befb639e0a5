/* gemm_avx2.c - AVX2 kernels (compiled with -mavx2 -mfma; nothing else here).
 *
 * int8: each weight row j is k consecutive bytes, like a row of A, so one
 * vpmaddubsw multiplies 32 k-values of a row of A with 32 of column j and
 * sums adjacent pairs with int16 saturation (exactly the reference's
 * arithmetic); vpmaddwd against ones widens to int32 and the lanes are
 * reduced at the end. Because columns are plain rows, a shortlist subset
 * costs nothing but a list of row pointers. Register tile: 3 rows x 3
 * columns, 2 x 4 for a leftover pair of rows, 1 row x 8 columns.
 *
 * float32: panels of 16 columns; each output is summed over k in order
 * with vmulps then vaddps (never FMA), so results equal gemm_ref.c's.
 */
#include <immintrin.h>
#include <string.h>

#include "nn/gemm_impl.h"

#define INLINE static inline __attribute__((always_inline))

static void avx2_quantize_u8(const float *x, size_t count, float mult, uint8_t *out)
{
    const __m256 m = _mm256_set1_ps(mult);
    const __m256i neg127 = _mm256_set1_epi8(-127), pos127 = _mm256_set1_epi8(127);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (size_t i = 0; i < count; i += 32) {
        __m256i g0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i), m));
        __m256i g1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8), m));
        __m256i g2 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 16), m));
        __m256i g3 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 24), m));
        __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(g0, g1), _mm256_packs_epi32(g2, g3));
        /* packs works within 128-bit lanes: put the 4-byte groups back in order. */
        p = _mm256_permutevar8x32_epi32(p, order);
        p = _mm256_add_epi8(_mm256_max_epi8(p, neg127), pos127);
        _mm256_storeu_si256((__m256i *)(out + i), p);
    }
}

/* Sums the 8 lanes of each of 4 accumulators into 4 int32. */
INLINE __m128i avx2_reduce4(__m256i s0, __m256i s1, __m256i s2, __m256i s3)
{
    __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* acc[r][c] for R rows of a and C weight rows; out[r][c] = the int32 sums. */
INLINE void avx2_i8_tile(const uint8_t *a, int k, const int8_t *const *wr, const int R, const int C,
                         int32_t out[4][8])
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[4][8];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_si256();
    for (int kk = 0; kk < k; kk += 32) {
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m256i av = _mm256_loadu_si256((const __m256i *)(a + (size_t)r * k + kk));
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                __m256i b = _mm256_loadu_si256((const __m256i *)(wr[c] + kk));
                __m256i t = _mm256_madd_epi16(_mm256_maddubs_epi16(av, b), ones);
                acc[r][c] = _mm256_add_epi32(acc[r][c], t);
            }
        }
    }
    const __m256i z = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 2
        for (int g = 0; g < C; g += 4) {
            __m128i s = avx2_reduce4(acc[r][g], g + 1 < C ? acc[r][g + 1] : z,
                                     g + 2 < C ? acc[r][g + 2] : z, g + 3 < C ? acc[r][g + 3] : z);
            int32_t tmp[4];
            _mm_storeu_si128((__m128i *)tmp, s);
            for (int c = g; c < C && c < g + 4; c++) out[r][c] = tmp[c - g];
        }
    }
}

/* One block of R rows over all columns, C at a time (1 at a time at the end). */
INLINE void avx2_i8_rows(const uint8_t *a, int k, const int8_t *w, const int32_t *cols, int ncols,
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
            avx2_i8_tile(a, k, wr, R, C, out);
        else
            avx2_i8_tile(a, k, wr, R, 1, out);
        for (int r = 0; r < R; r++) {
            for (int c = 0; c < n; c++) {
                int32_t j = cols ? cols[c0 + c] : c0 + c;
                y[(size_t)r * ldy + c0 + c] = (float)out[r][c] * unquant + bias[j];
            }
        }
        c0 += n;
    }
}

static void avx2_i8_gemm(const uint8_t *a, int m, int k, const int8_t *w, const int32_t *cols,
                         int ncols, float unquant, const float *bias, float *y, int ldy)
{
    int i = 0;
    for (; i + 3 <= m; i += 3)
        avx2_i8_rows(a + (size_t)i * k, k, w, cols, ncols, unquant, bias, y + (size_t)i * ldy, ldy,
                     3, 4);
    if (m - i == 2)
        avx2_i8_rows(a + (size_t)i * k, k, w, cols, ncols, unquant, bias, y + (size_t)i * ldy, ldy,
                     2, 4);
    else if (m - i == 1)
        avx2_i8_rows(a + (size_t)i * k, k, w, cols, ncols, unquant, bias, y + (size_t)i * ldy, ldy,
                     1, 8);
}

/* R rows x P panels of 16 columns: 2·R·P accumulators (at most 12). */
INLINE void avx2_f32_tile(const float *x, int k, const float *panel, const int R, const int P,
                          const float *bias, float *y, int ldy, int ncols)
{
    __m256 acc[6][12];
    const size_t ps = (size_t)k * FY_F32_PANEL;
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 12
        for (int p = 0; p < 2 * P; p++) acc[r][p] = _mm256_setzero_ps();
    for (int kk = 0; kk < k; kk++) {
#pragma GCC unroll 6
        for (int r = 0; r < R; r++) {
            __m256 xb = _mm256_broadcast_ss(x + (size_t)r * k + kk);
#pragma GCC unroll 6
            for (int p = 0; p < P; p++) {
                const float *wp = panel + p * ps + (size_t)kk * FY_F32_PANEL;
                acc[r][2 * p] =
                    _mm256_add_ps(acc[r][2 * p], _mm256_mul_ps(xb, _mm256_loadu_ps(wp)));
                acc[r][2 * p + 1] =
                    _mm256_add_ps(acc[r][2 * p + 1], _mm256_mul_ps(xb, _mm256_loadu_ps(wp + 8)));
            }
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 12
        for (int p = 0; p < 2 * P; p++) {
            float tmp[8];
            _mm256_storeu_ps(tmp, acc[r][p]);
            for (int l = 0; l < 8 && p * 8 + l < ncols; l++) {
                float v = tmp[l];
                if (bias) v = v + bias[p * 8 + l];
                y[(size_t)r * ldy + p * 8 + l] = v;
            }
        }
    }
}

INLINE void avx2_f32_rows(const float *x, int k, const float *panels, int ncols, const float *bias,
                          float *y, int ldy, const int R, const int P)
{
    const int np = (ncols + FY_F32_PANEL - 1) / FY_F32_PANEL;
    for (int p0 = 0; p0 < np;) {
        int n = np - p0 >= P ? P : 1;
        int c0 = p0 * FY_F32_PANEL;
        const float *pp = panels + (size_t)p0 * k * FY_F32_PANEL;
        const float *bb = bias ? bias + c0 : NULL;
        if (n == P)
            avx2_f32_tile(x, k, pp, R, P, bb, y + c0, ldy, ncols - c0);
        else
            avx2_f32_tile(x, k, pp, R, 1, bb, y + c0, ldy, ncols - c0);
        p0 += n;
    }
}

static void avx2_f32_gemm(const float *x, int m, int k, const float *panels, int ncols,
                          const float *bias, float *y, int ldy)
{
    int i = 0;
    for (; i + 6 <= m; i += 6)
        avx2_f32_rows(x + (size_t)i * k, k, panels, ncols, bias, y + (size_t)i * ldy, ldy, 6, 1);
    const float *xr = x + (size_t)i * k;
    float *yr = y + (size_t)i * ldy;
    switch (m - i) {
    case 5:
        avx2_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 5, 1);
        break;
    case 4:
        avx2_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 4, 1);
        break;
    case 3:
        avx2_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 3, 2);
        break;
    case 2:
        avx2_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 2, 3);
        break;
    case 1:
        avx2_f32_rows(xr, k, panels, ncols, bias, yr, ldy, 1, 6);
        break;
    default:
        break;
    }
}

const fy_gemm_kernels fy_gemm_avx2 = {
    .isa = FY_ISA_AVX2,
    .quantize_u8 = avx2_quantize_u8,
    .i8_gemm = avx2_i8_gemm,
    .f32_gemm = avx2_f32_gemm,
};
