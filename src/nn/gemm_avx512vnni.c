/* gemm_avx512vnni.c - AVX-512 kernels (compiled with -mavx512f -mavx512bw
 * -mavx512vl -mavx512vnni; nothing else here).
 *
 * int8, two products (see gemm.h, gemm_impl.h), each in two layouts:
 *   - the saturating product (i8_gemm, i8_gemm_p16 with sat NULL): the
 *     int16 pair saturation by construction - vpmaddubsw sums pairs with
 *     saturation, then VNNI vpdpwssd against ones widens and adds them;
 *   - the VNNI product (i8_gemm_vnni, i8_gemm_p16 with sat): one vpdpbusd
 *     per 64 products (the exact sum of each four: half the instructions),
 *     then fy_i8_sat_fix for the few pairs of the layer that can saturate,
 *     so the int32 sums equal the reference's.
 * Rows of A (i8_gemm, i8_gemm_vnni; a few rows: decoder steps): passes of
 * 8 columns whose weight rows stay in L1, each row of A against them with
 * 16 accumulators (two per column: chains half as long), the 8 sums
 * reduced into one vector and finished with one vector epilogue; at m <= 3
 * the next pass's weight rows are prefetched (they come from L3 or
 * memory, and the hardware prefetcher does not follow shortlist rows).
 * One row on the one-row layout (i8_gemv_il, the VNNI product: a decoder
 * step of one sentence, on the step layers' second copy): per k-quad of
 * A, its four bytes broadcast against 128 columns' quads (8 vectors), 16
 * accumulators that are the outputs; the weights read as one sequential
 * stream, and no lane sums reduced (gemm_bench --copies 8, weights from
 * L3: 1.05-1.26x the row kernel).
 * Panels (i8_gemm_p16; 8 rows and more): A packed 16 rows to a panel, one
 * lane per row; each weight's four bytes broadcast; 2 panels x 8 columns
 * = 16 accumulators that are already the outputs (no lane reductions),
 * transposed into rows of y at the end.
 *
 * float32: panels of 16 columns = one zmm; vmulps then vaddps (no FMA),
 * in k order, so results equal gemm_ref.c's.
 */
#include <immintrin.h>
#include <string.h>

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

/* ---- i8_gemm, i8_gemm_vnni: rows of a ---- */

/* Lane c of the result = the sum of acc[c]'s sixteen lanes. */
INLINE __m256i avx512_reduce8(const __m512i acc[8])
{
    __m256i h[8];
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++)
        h[c] =
            _mm256_add_epi32(_mm512_castsi512_si256(acc[c]), _mm512_extracti64x4_epi64(acc[c], 1));
    __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(h[0], h[1]), _mm256_hadd_epi32(h[2], h[3]));
    __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(h[4], h[5]), _mm256_hadd_epi32(h[6], h[7]));
    /* h0 = [c0..c3 low halves | c0..c3 high halves], h1 likewise for c4..c7. */
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                            _mm256_permute2x128_si256(h0, h1, 0x31));
}

/* One pass: 8 weight rows, their bias values and column ids. */
typedef struct avx512_pass {
    const int8_t *wr[8];
    int32_t j[8];
    float bv[8];
    int nc;  /* real columns (the rest repeat the last one) */
    int fix; /* some column has pairs to fix */
} avx512_pass;

/* y[0 .. nc) for one row a against the pass: 8 columns, each with two
 * accumulators (the even and the odd 64-byte blocks of k), so that the
 * chains of dependent instructions are half as long; named variables,
 * since gcc spills an array of them inside the loop. SAT: the saturating
 * product (vpmaddubsw, then vpdpwssd), else vpdpbusd. */
#define DP64(acc, av, b)                                                                           \
    acc = SAT ? _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(av, b), ones)                        \
              : _mm512_dpbusd_epi32(acc, av, b)
#define WLOAD(c, off) _mm512_loadu_si512((const void *)(wr##c + kk + (off)))

INLINE void avx512_dp_row1(const uint8_t *a, int k, const avx512_pass *p, const fy_i8_sat *sat,
                           float unquant, float *y, const int SAT)
{
    const __m512i ones = _mm512_set1_epi16(1);
    const int8_t *wr0 = p->wr[0], *wr1 = p->wr[1], *wr2 = p->wr[2], *wr3 = p->wr[3];
    const int8_t *wr4 = p->wr[4], *wr5 = p->wr[5], *wr6 = p->wr[6], *wr7 = p->wr[7];
    __m512i x0 = _mm512_setzero_si512(), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0,
            x7 = x0, z0 = x0, z1 = x0, z2 = x0, z3 = x0, z4 = x0, z5 = x0, z6 = x0, z7 = x0;
    int kk = 0;
    for (; kk + 128 <= k; kk += 128) {
        __m512i u = _mm512_loadu_si512((const void *)(a + kk));
        __m512i v = _mm512_loadu_si512((const void *)(a + kk + 64));
#define COLUMN(c)                                                                                  \
    DP64(x##c, u, WLOAD(c, 0));                                                                    \
    DP64(z##c, v, WLOAD(c, 64));
        COLUMN(0)
        COLUMN(1)
        COLUMN(2)
        COLUMN(3)
        COLUMN(4)
        COLUMN(5)
        COLUMN(6)
        COLUMN(7)
#undef COLUMN
    }
    if (kk < k) {
        __m512i u = _mm512_loadu_si512((const void *)(a + kk));
        DP64(x0, u, WLOAD(0, 0));
        DP64(x1, u, WLOAD(1, 0));
        DP64(x2, u, WLOAD(2, 0));
        DP64(x3, u, WLOAD(3, 0));
        DP64(x4, u, WLOAD(4, 0));
        DP64(x5, u, WLOAD(5, 0));
        DP64(x6, u, WLOAD(6, 0));
        DP64(x7, u, WLOAD(7, 0));
    }
    const __m512i acc[8] = {
        _mm512_add_epi32(x0, z0), _mm512_add_epi32(x1, z1), _mm512_add_epi32(x2, z2),
        _mm512_add_epi32(x3, z3), _mm512_add_epi32(x4, z4), _mm512_add_epi32(x5, z5),
        _mm512_add_epi32(x6, z6), _mm512_add_epi32(x7, z7),
    };
    __m256i s = avx512_reduce8(acc);
    if (!SAT && p->fix) {
        int32_t t[8];
        _mm256_storeu_si256((__m256i *)t, s);
        for (int c = 0; c < p->nc; c++) t[c] += fy_i8_sat_fix(a, p->wr[c], sat, p->j[c]);
        s = _mm256_loadu_si256((const __m256i *)t);
    }
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(unquant));
    const __mmask8 keep = (__mmask8)((1u << p->nc) - 1);
    _mm256_mask_storeu_ps(y, keep, _mm256_add_ps(f, _mm256_loadu_ps(p->bv)));
}
#undef DP64
#undef WLOAD

/* The pass of columns c0 .. c0 + nc - 1 (nc <= 8). */
INLINE void avx512_pass_set(avx512_pass *p, int k, const int8_t *w, const fy_i8_sat *sat,
                            const int32_t *cols, int c0, int nc, const float *bias)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i j;
    if (nc == 8) {
        j = cols ? _mm256_loadu_si256((const __m256i *)(cols + c0))
                 : _mm256_add_epi32(_mm256_set1_epi32(c0), iota);
    } else { /* a short pass repeats its last column */
        __m256i lane = _mm256_min_epi32(iota, _mm256_set1_epi32(nc - 1));
        j = cols ? _mm256_i32gather_epi32((const int *)(cols + c0), lane, 4)
                 : _mm256_add_epi32(_mm256_set1_epi32(c0), lane);
    }
    _mm256_storeu_si256((__m256i *)p->j, j);
    _mm256_storeu_ps(p->bv, _mm256_i32gather_ps(bias, j, 4));
    /* w + j·k in 64 bits (j, k >= 0: the unsigned 32 x 32 product) */
    __m512i off = _mm512_mul_epu32(_mm512_cvtepu32_epi64(j), _mm512_set1_epi64(k));
    _mm512_storeu_si512((void *)p->wr,
                        _mm512_add_epi64(_mm512_set1_epi64((int64_t)(intptr_t)w), off));
    p->nc = nc;
    p->fix = fy_i8_sat_any(sat, p->j, 0, nc);
}

/* Prefetches the weight rows of the 8 columns from c0 into L1. */
static void avx512_prefetch_pass(const int8_t *w, int k, const int32_t *cols, int c0)
{
    for (int c = 0; c < 8; c++) {
        const char *nx = (const char *)(w + (size_t)(cols ? cols[c0 + c] : c0 + c) * k);
        for (int o = 0; o < k; o += 64) _mm_prefetch(nx + o, _MM_HINT_T0);
    }
}

/* Passes of 8 columns, every row of a against each (its weight rows stay
 * in L1); the next pass's rows prefetched at m <= 3 (decoder steps: the
 * weights come from L3 or memory, and the hardware prefetcher does not
 * follow shortlist rows). SAT: the saturating product. */
INLINE void avx512_rows(const uint8_t *a, int m, int k, const int8_t *w, const fy_i8_sat *sat,
                        const int32_t *cols, int ncols, float unquant, const float *bias, float *y,
                        int ldy, const int SAT)
{
    avx512_pass p;
    for (int c0 = 0; c0 < ncols; c0 += 8) {
        int nc = ncols - c0 < 8 ? ncols - c0 : 8;
        avx512_pass_set(&p, k, w, SAT ? NULL : sat, cols, c0, nc, bias);
        if (m <= 3 && c0 + 16 <= ncols) avx512_prefetch_pass(w, k, cols, c0 + 8);
        for (int i = 0; i < m; i++)
            avx512_dp_row1(a + (size_t)i * k, k, &p, sat, unquant, y + (size_t)i * ldy + c0, SAT);
    }
}

static void avx512_i8_gemm(const uint8_t *a, int m, int k, const int8_t *w, const int32_t *cols,
                           int ncols, float unquant, const float *bias, float *y, int ldy)
{
    avx512_rows(a, m, k, w, NULL, cols, ncols, unquant, bias, y, ldy, 1);
}

static void avx512_i8_gemm_vnni(const uint8_t *a, int m, int k, const int8_t *w,
                                const fy_i8_sat *sat, const int32_t *cols, int ncols, float unquant,
                                const float *bias, float *y, int ldy)
{
    avx512_rows(a, m, k, w, sat, cols, ncols, unquant, bias, y, ldy, 0);
}

/* ---- one row against the one-row layout: i8_gemv_il ---- */

/* The VNNI product only: with the saturating one (two instructions a
 * vector) the one-row layout measured no faster end to end. */
#define DPQ(acc, av, b) acc = _mm512_dpbusd_epi32(acc, av, b)

/* a's k-quad q broadcast to every lane. */
INLINE __m512i avx512_quad(const uint8_t *a, int q)
{
    int32_t v;
    memcpy(&v, a + 4 * q, sizeof v);
    return _mm512_set1_epi32(v);
}

/* The 128 sums of one panel (wp: its k/4 rows of 512 bytes) into acc: two
 * sets of 8 accumulators, even and odd k-quads, so that each dependent
 * chain is k/8 long and 16 run side by side. The weights are read in
 * order, one stream the hardware prefetcher follows. */
static void avx512_il_panel(const uint8_t *a, int k, const int8_t *wp, int32_t *acc)
{
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0,
            s7 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0, t4 = s0, t5 = s0, t6 = s0, t7 = s0;
#define WL(i) _mm512_loadu_si512((const void *)(r + 64 * (i)))
    for (int q = 0; q < k / 4; q += 2) {
        const __m512i u = avx512_quad(a, q), v = avx512_quad(a, q + 1);
        const int8_t *r = wp + (size_t)q * 512;
        DPQ(s0, u, WL(0));
        DPQ(s1, u, WL(1));
        DPQ(s2, u, WL(2));
        DPQ(s3, u, WL(3));
        DPQ(s4, u, WL(4));
        DPQ(s5, u, WL(5));
        DPQ(s6, u, WL(6));
        DPQ(s7, u, WL(7));
        DPQ(t0, v, WL(8));
        DPQ(t1, v, WL(9));
        DPQ(t2, v, WL(10));
        DPQ(t3, v, WL(11));
        DPQ(t4, v, WL(12));
        DPQ(t5, v, WL(13));
        DPQ(t6, v, WL(14));
        DPQ(t7, v, WL(15));
    }
#undef WL
    _mm512_storeu_si512((void *)(acc + 0), _mm512_add_epi32(s0, t0));
    _mm512_storeu_si512((void *)(acc + 16), _mm512_add_epi32(s1, t1));
    _mm512_storeu_si512((void *)(acc + 32), _mm512_add_epi32(s2, t2));
    _mm512_storeu_si512((void *)(acc + 48), _mm512_add_epi32(s3, t3));
    _mm512_storeu_si512((void *)(acc + 64), _mm512_add_epi32(s4, t4));
    _mm512_storeu_si512((void *)(acc + 80), _mm512_add_epi32(s5, t5));
    _mm512_storeu_si512((void *)(acc + 96), _mm512_add_epi32(s6, t6));
    _mm512_storeu_si512((void *)(acc + 112), _mm512_add_epi32(s7, t7));
}
#undef DPQ

/* The fixes of the panel's columns c0 .. c0 + 127 that have pairs: their
 * bits are two whole words of sat->any (sat->base % 64 == 0). */
static void avx512_il_fix(const uint8_t *a, int k, const int8_t *w, const fy_i8_sat *sat, int c0,
                          int32_t *acc)
{
    const uint64_t *any = sat->any + (sat->base + c0) / 64;
    for (int h = 0; h < FY_I8_IL_COLS / 64; h++)
        for (uint64_t bits = any[h]; bits; bits &= bits - 1) {
            int c = h * 64 + __builtin_ctzll(bits);
            acc[c] += fy_i8_sat_fix(a, w + (size_t)(c0 + c) * k, sat, c0 + c);
        }
}

static void avx512_i8_gemv_il(const uint8_t *a, int k, const int8_t *wil, const int8_t *w,
                              const fy_i8_sat *sat, int ncols, float unquant, const float *bias,
                              float *y)
{
    const __m512 uq = _mm512_set1_ps(unquant);
    for (int c0 = 0; c0 < ncols; c0 += FY_I8_IL_COLS) {
        int32_t acc[FY_I8_IL_COLS] __attribute__((aligned(64)));
        avx512_il_panel(a, k, wil + (size_t)c0 * k, acc);
        if (sat->any) avx512_il_fix(a, k, w, sat, c0, acc);
        for (int c = 0; c < FY_I8_IL_COLS; c += 16) {
            __m512 f =
                _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512((const void *)(acc + c))), uq);
            _mm512_storeu_ps(y + c0 + c, _mm512_add_ps(f, _mm512_loadu_ps(bias + c0 + c)));
        }
    }
}

/* ---- panels of 16 rows: pack_a16, i8_gemm_p16 ---- */

/* How many rows past the last full panel go through the row kernel
 * instead of a panel of their own, whose products and broadcasts run on
 * all 16 lanes. Measured (gemm_bench --rows, Zen 5, every shape of the two
 * real models): with vpdpbusd a row costs about a tenth of a lone panel,
 * and less is saved where that panel would have shared its broadcasts
 * with the last full one (an odd number of them); the saturating product
 * spends more per lane, so pays off the same either way. */
INLINE int p16_tail_rows(int full_panels, const int SAT)
{
    return SAT ? 11 : full_panels % 2 ? 6 : 10;
}

/* The 16 x 16 int32 block r (r[l]: row l) as columns: out[q] = (r[0][q],
 * r[1][q], ..., r[15][q]). */
INLINE void avx512_transpose_16x16(const __m512i r[16], __m512i out[16])
{
    __m512i t[16], u[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    /* in each 128-bit lane j: u[4i + c] = rows 4i .. 4i + 3 of column 4j + c */
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    /* column 4j + c: lane j of u[c], u[4 + c], u[8 + c], u[12 + c] */
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44);
        __m512i v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xee);
        __m512i w0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44);
        __m512i w1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xee);
        out[c] = _mm512_shuffle_i32x4(v0, w0, 0x88);
        out[4 + c] = _mm512_shuffle_i32x4(v0, w0, 0xdd);
        out[8 + c] = _mm512_shuffle_i32x4(v1, w1, 0x88);
        out[12 + c] = _mm512_shuffle_i32x4(v1, w1, 0xdd);
    }
}

/* A panel's 64-byte lines one after another, each written whole (before,
 * 4 bytes at a time, each line 16 times; a's scratch is read by the
 * helpers too, so such a line went back and forth between the cores).
 * Zen 5: 26 rows of 512 packed in 0.17 us instead of 1.6 alone, and
 * quantised and packed in 4.2 us instead of 6.0 with a helper beside. */
static void avx512_pack_a16(const uint8_t *a, int m, int k, uint8_t *ap)
{
    const int kq = k / 4; /* k % 64 == 0: whole blocks of 16 */
    for (int p = 0; p * 16 < m; p++) {
        int32_t *dst = (int32_t *)(ap + (size_t)p * 16 * k);
        const int rows = m - p * 16 < 16 ? m - p * 16 : 16;
        const uint8_t *src = a + (size_t)p * 16 * k;
        for (int q = 0; q < kq; q += 16) {
            __m512i r[16], col[16];
#pragma GCC unroll 16
            for (int l = 0; l < 16; l++)
                r[l] = l < rows ? _mm512_loadu_si512((const void *)(src + (size_t)l * k + 4 * q))
                                : _mm512_setzero_si512();
            avx512_transpose_16x16(r, col);
#pragma GCC unroll 16
            for (int c = 0; c < 16; c++) _mm512_storeu_si512((void *)(dst + (q + c) * 16), col[c]);
        }
    }
}

/* Transposes v[c] (lane l = row l, column c < 8) into rows, and stores
 * row l's 8 floats at y + l·ldy (nc of them; rows l < rows). */
INLINE void avx512_store_8x16(__m512 v[8], float *y, int ldy, int rows, int nc)
{
    __m512 t[8], u[8];
#pragma GCC unroll 4
    for (int c = 0; c < 8; c += 2) {
        t[c] = _mm512_unpacklo_ps(v[c], v[c + 1]);
        t[c + 1] = _mm512_unpackhi_ps(v[c], v[c + 1]);
    }
    /* in each 128-bit lane q: u[r] = row 4q + r, columns 0-3; u[4 + r]: 4-7 */
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m512 *a = t + 4 * h;
        u[4 * h + 0] = _mm512_shuffle_ps(a[0], a[2], 0x44);
        u[4 * h + 1] = _mm512_shuffle_ps(a[0], a[2], 0xee);
        u[4 * h + 2] = _mm512_shuffle_ps(a[1], a[3], 0x44);
        u[4 * h + 3] = _mm512_shuffle_ps(a[1], a[3], 0xee);
    }
    const __mmask8 keep = (__mmask8)((1u << nc) - 1);
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        /* [lo.q0, hi.q0, lo.q1, hi.q1] = rows r, 4 + r; then rows 8 + r, 12 + r */
        __m512 x = _mm512_shuffle_f32x4(u[r], u[4 + r], 0x44);
        __m512 z = _mm512_shuffle_f32x4(u[r], u[4 + r], 0xee);
        x = _mm512_shuffle_f32x4(x, x, 0xd8);
        z = _mm512_shuffle_f32x4(z, z, 0xd8);
        __m256 part[4] = {
            _mm512_castps512_ps256(x),
            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)),
            _mm512_castps512_ps256(z),
            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(z), 1)),
        };
        for (int g = 0; g < 4; g++) {
            int row = r + 4 * g;
            if (row < rows) _mm256_mask_storeu_ps(y + (size_t)row * ldy, keep, part[g]);
        }
    }
}

/* The epilogue of one panel: fixes, then (float)acc · unquant + bias. */
INLINE void avx512_p16_finish(__m512i acc[8], const uint8_t *a, int k, const avx512_pass *p,
                              const fy_i8_sat *sat, int rows, float unquant, float *y, int ldy)
{
    if (sat && p->fix) {
        int32_t t[8][16];
        for (int c = 0; c < 8; c++) _mm512_storeu_si512((void *)t[c], acc[c]);
        for (int c = 0; c < p->nc; c++)
            for (int l = 0; l < rows; l++)
                t[c][l] += fy_i8_sat_fix(a + (size_t)l * k, p->wr[c], sat, p->j[c]);
        for (int c = 0; c < 8; c++) acc[c] = _mm512_loadu_si512((const void *)t[c]);
    }
    const __m512 uq = _mm512_set1_ps(unquant);
    __m512 v[8];
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++)
        v[c] =
            _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[c]), uq), _mm512_set1_ps(p->bv[c]));
    avx512_store_8x16(v, y, ldy, rows, p->nc);
}

/* One k-quad of weights, column c, broadcast to every lane. */
#define BCAST(c) _mm512_set1_epi32(*(const int32_t *)(void *)(wr##c + 4 * kq))
/* acc += a·b: vpdpbusd, or the saturating pair sums (vpmaddubsw) widened
 * and added by vpdpwssd. */
#define DP(acc, av, b)                                                                             \
    acc = SAT ? _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(av, b), ones)                        \
              : _mm512_dpbusd_epi32(acc, av, b)

/* P panels (16·P rows from a's row i0) against the pass's 8 columns.
 * SAT: the saturating product, else vpdpbusd. The 16 accumulators are
 * named variables: gcc spills an array of them inside the loop. */
INLINE void avx512_p16_tile(const uint8_t *a, const uint8_t *ap, int i0, int m, int k,
                            const avx512_pass *p, const fy_i8_sat *sat, float unquant, float *y,
                            int ldy, const int P, const int SAT)
{
    const __m512i ones = _mm512_set1_epi16(1);
    const size_t panel = (size_t)16 * k;
    const uint8_t *a0 = ap + (size_t)(i0 / 16) * panel, *a1 = a0 + panel;
    const int8_t *wr0 = p->wr[0], *wr1 = p->wr[1], *wr2 = p->wr[2], *wr3 = p->wr[3];
    const int8_t *wr4 = p->wr[4], *wr5 = p->wr[5], *wr6 = p->wr[6], *wr7 = p->wr[7];
    __m512i x0 = _mm512_setzero_si512(), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0,
            x7 = x0, z0 = x0, z1 = x0, z2 = x0, z3 = x0, z4 = x0, z5 = x0, z6 = x0, z7 = x0;
    const int nq = k / 4;
    for (int kq = 0; kq < nq; kq++) {
        __m512i u = _mm512_load_si512((const void *)(a0 + (size_t)kq * 64)), v = u, b;
        if (P == 2) v = _mm512_load_si512((const void *)(a1 + (size_t)kq * 64));
#define COLUMN(c)                                                                                  \
    b = BCAST(c);                                                                                  \
    DP(x##c, u, b);                                                                                \
    if (P == 2) DP(z##c, v, b);
        COLUMN(0)
        COLUMN(1)
        COLUMN(2)
        COLUMN(3)
        COLUMN(4)
        COLUMN(5)
        COLUMN(6)
        COLUMN(7)
#undef COLUMN
    }
    __m512i acc[2][8] = {{x0, x1, x2, x3, x4, x5, x6, x7}, {z0, z1, z2, z3, z4, z5, z6, z7}};
    for (int q = 0; q < P; q++) {
        int r0 = i0 + 16 * q, rows = m - r0 < 16 ? m - r0 : 16;
        if (rows > 0)
            avx512_p16_finish(acc[q], a + (size_t)r0 * k, k, p, sat, rows, unquant,
                              y + (size_t)r0 * ldy, ldy);
    }
}
#undef BCAST
#undef DP

/* Rows i0 .. m - 1 of a against one pass. Out of line: inlined into the
 * panel loop, it made gcc 12 compile the VNNI product's panels ~15% slower. */
__attribute__((noinline)) static void avx512_rows_of_pass(const uint8_t *a, int i0, int m, int k,
                                                          const avx512_pass *p,
                                                          const fy_i8_sat *sat, float unquant,
                                                          float *y, int ldy, int sat_product)
{
    for (int i = i0; i < m; i++) {
        const uint8_t *row = a + (size_t)i * k;
        if (sat_product)
            avx512_dp_row1(row, k, p, NULL, unquant, y + (size_t)i * ldy, 1);
        else
            avx512_dp_row1(row, k, p, sat, unquant, y + (size_t)i * ldy, 0);
    }
}

INLINE void avx512_p16(const uint8_t *a, const uint8_t *ap, int m, int k, const int8_t *w,
                       const fy_i8_sat *sat, const int32_t *cols, int ncols, float unquant,
                       const float *bias, float *y, int ldy, const int SAT)
{
    avx512_pass p;
    /* A last panel of a few rows costs a full one (its products and
     * broadcasts run on all 16 lanes): those rows go through the row
     * kernel, against the same pass (its weights in L1 by then). */
    const int tail = m % 16,
              np = tail && tail <= p16_tail_rows(m / 16, SAT) ? m / 16 : (m + 15) / 16;
    for (int c0 = 0; c0 < ncols; c0 += 8) {
        int nc = ncols - c0 < 8 ? ncols - c0 : 8;
        avx512_pass_set(&p, k, w, SAT ? NULL : sat, cols, c0, nc, bias);
        /* the next pass's rows: from L3 or memory, and the hardware
         * prefetcher does not follow eight streams of four bytes a step */
        if (c0 + 16 <= ncols) avx512_prefetch_pass(w, k, cols, c0 + 8);
        int q = 0;
        for (; q + 2 <= np; q += 2)
            avx512_p16_tile(a, ap, q * 16, m, k, &p, sat, unquant, y + c0, ldy, 2, SAT);
        if (q < np) avx512_p16_tile(a, ap, q * 16, m, k, &p, sat, unquant, y + c0, ldy, 1, SAT);
        if (np * 16 < m) avx512_rows_of_pass(a, np * 16, m, k, &p, sat, unquant, y + c0, ldy, SAT);
    }
}

static void avx512_i8_gemm_p16(const uint8_t *a, const uint8_t *ap, int m, int k, const int8_t *w,
                               const fy_i8_sat *sat, const int32_t *cols, int ncols, float unquant,
                               const float *bias, float *y, int ldy)
{
    if (sat)
        avx512_p16(a, ap, m, k, w, sat, cols, ncols, unquant, bias, y, ldy, 0);
    else
        avx512_p16(a, ap, m, k, w, NULL, cols, ncols, unquant, bias, y, ldy, 1);
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
    .i8_gemm_vnni = avx512_i8_gemm_vnni,
    .pack_a16 = avx512_pack_a16,
    .i8_gemm_p16 = avx512_i8_gemm_p16,
    .i8_gemv_il = avx512_i8_gemv_il,
    .f32_gemm = avx512_f32_gemm,
    .attend = fy_attend_avx512,
    .expf_row = fy_expf_row_avx512,
};
