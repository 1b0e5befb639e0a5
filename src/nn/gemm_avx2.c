/* gemm_avx2.c - AVX2 kernels (compiled with -mavx2 -mfma; nothing else here).
 *
 * int8: each weight row j is k consecutive bytes, like a row of A, so one
 * vpmaddubsw multiplies 32 k-values of a row of A with 32 of column j and
 * sums adjacent pairs with int16 saturation (exactly the reference's
 * arithmetic); vpmaddwd against ones widens to int32 and the lanes are
 * reduced at the end. Because columns are plain rows, a shortlist subset
 * costs nothing but a list of row pointers. Passes of 8 columns, each row
 * of A in turn against them (see fy_avx2_i8_gemm); a last pass of fewer than
 * 8 columns goes one column at a time.
 *
 * float32: panels of 16 columns; each output is summed over k in order
 * with vmulps then vaddps (never FMA), so results equal gemm_ref.c's.
 */
#include <immintrin.h>
#include <string.h>

#include "nn/gemm_impl.h"

#define INLINE static inline __attribute__((always_inline))

void fy_avx2_quantize_u8(const float *x, size_t count, float mult, uint8_t *out)
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

/* Sums each of 8 accumulators' lanes: lane c of the result = sum of acc[c]. */
INLINE __m256i avx2_reduce8(const __m256i acc[8])
{
    __m256i h0 =
        _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]), _mm256_hadd_epi32(acc[2], acc[3]));
    __m256i h1 =
        _mm256_hadd_epi32(_mm256_hadd_epi32(acc[4], acc[5]), _mm256_hadd_epi32(acc[6], acc[7]));
    /* h0 = [c0..c3 low halves | c0..c3 high halves], h1 likewise for c4..c7. */
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                            _mm256_permute2x128_si256(h0, h1, 0x31));
}

/* y[0..8) for one row of a against the 8 weight rows wr: 8 independent
 * accumulators, one vector reduction and one vector epilogue per 8 columns
 * (mul then add, as the scalar epilogue: the same floats). */
INLINE void avx2_i8_row8(const uint8_t *a, int k, const int8_t *const *wr, const float *bv,
                         float unquant, float *y)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[8];
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++) acc[c] = _mm256_setzero_si256();
    for (int kk = 0; kk < k; kk += 32) {
        __m256i av = _mm256_loadu_si256((const __m256i *)(a + kk));
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            __m256i b = _mm256_loadu_si256((const __m256i *)(wr[c] + kk));
            acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(_mm256_maddubs_epi16(av, b), ones));
        }
    }
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(avx2_reduce8(acc)), _mm256_set1_ps(unquant));
    _mm256_storeu_ps(y, _mm256_add_ps(v, _mm256_loadu_ps(bv)));
}

/* Passes of 8 columns; in each, every row of a runs against the same 8
 * weight rows, which stay in L1 (8·k bytes), so no register tile over rows
 * is needed: Zen 3 loads three vectors a cycle but multiplies only two, and
 * the multiplies are the bound. At m = 1 (a decoder step) the weights come
 * from L3 or memory: the next pass's rows are prefetched while this one
 * computes (the hardware prefetcher does not follow shortlist rows). */
void fy_avx2_i8_gemm(const uint8_t *a, int m, int k, const int8_t *w, const int32_t *cols,
                     int ncols, float unquant, const float *bias, float *y, int ldy)
{
    int c0 = 0;
    for (; c0 + 8 <= ncols; c0 += 8) {
        const int8_t *wr[8];
        float bv[8];
        /* Two plain loops: a merged one (cols ? cols[i] : i) is vectorised
         * by gcc into a masked load from cols, which with cols == NULL takes
         * a slow microcode assist on AMD at every pass. */
        if (cols) {
            for (int c = 0; c < 8; c++) {
                wr[c] = w + (size_t)cols[c0 + c] * k;
                bv[c] = bias[cols[c0 + c]];
            }
        } else {
            for (int c = 0; c < 8; c++) {
                wr[c] = w + (size_t)(c0 + c) * k;
                bv[c] = bias[c0 + c];
            }
        }
        if (c0 + 16 <= ncols) {
            for (int c = 0; c < 8; c++) {
                const char *nx =
                    (const char *)(w + (size_t)(cols ? cols[c0 + 8 + c] : c0 + 8 + c) * k);
                for (int o = 0; o < k; o += 64) _mm_prefetch(nx + o, _MM_HINT_T0);
            }
        }
        for (int i = 0; i < m; i++)
            avx2_i8_row8(a + (size_t)i * k, k, wr, bv, unquant, y + (size_t)i * ldy + c0);
    }
    if (c0 == ncols) return;
    for (int i = 0; i < m; i++) {
        const uint8_t *ar = a + (size_t)i * k;
        float *yr = y + (size_t)i * ldy + c0;
        if (cols)
            avx2_i8_rows(ar, k, w, cols + c0, ncols - c0, unquant, bias, yr, ldy, 1, 8);
        else
            avx2_i8_rows(ar, k, w + (size_t)c0 * k, NULL, ncols - c0, unquant, bias + c0, yr, ldy,
                         1, 8);
    }
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

void fy_avx2_f32_gemm(const float *x, int m, int k, const float *panels, int ncols,
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
    .quantize_u8 = fy_avx2_quantize_u8,
    .i8_gemm = fy_avx2_i8_gemm,
    .i8_gemm_vnni = NULL,
    .f32_gemm = fy_avx2_f32_gemm,
    .attend = fy_attend_avx2,
    .expf_row = fy_expf_row_avx2,
};
