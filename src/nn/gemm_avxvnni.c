/* gemm_avxvnni.c - the AVX-VNNI int8 product (compiled with -mavx2 -mfma
 * -mavxvnni; nothing else here): CPUs with the VEX-encoded vpdpbusd on
 * 256-bit vectors, with or without AVX-512 (Intel Alder Lake and later
 * cores, Zen 5).
 *
 * i8_gemm_vnni: one vpdpbusd per 32 products (the exact sum of each four,
 * no int16 stage), then fy_i8_sat_fix for the layer's few pairs that can
 * saturate: the reference's int32 sums. Same structure as gemm_avx2.c's
 * product: passes of 8 columns whose weight rows stay in L1, every row of
 * A in turn against them with 8 accumulators (16 ymm registers leave no
 * room for a taller tile), one vector reduction and one vector epilogue per
 * 8 columns, the next pass's rows prefetched at m <= 3. Every other entry
 * is the AVX2 path's (the saturating product for layers with many pairs
 * that can saturate, quantisation, float32, attention).
 */
#include <immintrin.h>

#include "nn/gemm_impl.h"

#define INLINE static inline __attribute__((always_inline))

/* Lane c of the result = the sum of acc[c]'s eight lanes. */
INLINE __m256i vnni_reduce8(const __m256i acc[8])
{
    __m256i h0 =
        _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]), _mm256_hadd_epi32(acc[2], acc[3]));
    __m256i h1 =
        _mm256_hadd_epi32(_mm256_hadd_epi32(acc[4], acc[5]), _mm256_hadd_epi32(acc[6], acc[7]));
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                            _mm256_permute2x128_si256(h0, h1, 0x31));
}

/* One pass: 8 weight rows (a short pass repeats its last), bias, ids. */
typedef struct vnni_pass {
    const int8_t *wr[8];
    int32_t j[8];
    float bv[8];
    int nc;  /* real columns */
    int fix; /* some column has pairs to fix */
} vnni_pass;

static void vnni_pass_set(vnni_pass *p, int k, const int8_t *w, const fy_i8_sat *sat,
                          const int32_t *cols, int c0, int nc, const float *bias)
{
    /* Two plain loops: see gemm_avx2.c on cols ? cols[i] : i. */
    if (cols)
        for (int c = 0; c < 8; c++) p->j[c] = cols[c0 + (c < nc ? c : nc - 1)];
    else
        for (int c = 0; c < 8; c++) p->j[c] = c0 + (c < nc ? c : nc - 1);
    for (int c = 0; c < 8; c++) {
        p->wr[c] = w + (size_t)p->j[c] * k;
        p->bv[c] = bias[p->j[c]];
    }
    p->nc = nc;
    p->fix = fy_i8_sat_any(sat, p->j, 0, nc);
}

/* y[0 .. nc) for one row a against the pass. */
INLINE void vnni_row8(const uint8_t *a, int k, const vnni_pass *p, const fy_i8_sat *sat,
                      float unquant, float *y)
{
    __m256i acc[8];
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++) acc[c] = _mm256_setzero_si256();
    for (int kk = 0; kk < k; kk += 32) {
        __m256i av = _mm256_loadu_si256((const __m256i *)(a + kk));
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            __m256i b = _mm256_loadu_si256((const __m256i *)(p->wr[c] + kk));
            acc[c] = _mm256_dpbusd_avx_epi32(acc[c], av, b);
        }
    }
    int32_t t[8];
    __m256i s = vnni_reduce8(acc);
    if (p->fix) {
        _mm256_storeu_si256((__m256i *)t, s);
        for (int c = 0; c < p->nc; c++) t[c] += fy_i8_sat_fix(a, p->wr[c], sat, p->j[c]);
        s = _mm256_loadu_si256((const __m256i *)t);
    }
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(unquant));
    v = _mm256_add_ps(v, _mm256_loadu_ps(p->bv));
    if (p->nc == 8) {
        _mm256_storeu_ps(y, v);
        return;
    }
    float o[8];
    _mm256_storeu_ps(o, v);
    for (int c = 0; c < p->nc; c++) y[c] = o[c];
}

static void avxvnni_i8_gemm_vnni(const uint8_t *a, int m, int k, const int8_t *w,
                                 const fy_i8_sat *sat, const int32_t *cols, int ncols,
                                 float unquant, const float *bias, float *y, int ldy)
{
    vnni_pass p;
    for (int c0 = 0; c0 < ncols; c0 += 8) {
        int nc = ncols - c0 < 8 ? ncols - c0 : 8;
        vnni_pass_set(&p, k, w, sat, cols, c0, nc, bias);
        if (m <= 3 && c0 + 16 <= ncols) {
            for (int c = 0; c < 8; c++) {
                const char *nx =
                    (const char *)(w + (size_t)(cols ? cols[c0 + 8 + c] : c0 + 8 + c) * k);
                for (int o = 0; o < k; o += 64) _mm_prefetch(nx + o, _MM_HINT_T0);
            }
        }
        for (int i = 0; i < m; i++)
            vnni_row8(a + (size_t)i * k, k, &p, sat, unquant, y + (size_t)i * ldy + c0);
    }
}

const fy_gemm_kernels fy_gemm_avxvnni = {
    .isa = FY_ISA_AVXVNNI,
    .quantize_u8 = fy_avx2_quantize_u8,
    .i8_gemm = fy_avx2_i8_gemm,
    .i8_gemm_vnni = avxvnni_i8_gemm_vnni,
    .f32_gemm = fy_avx2_f32_gemm,
    .attend = fy_attend_avx2,
    .expf_row = fy_expf_row_avx2,
};
