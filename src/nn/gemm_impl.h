/* gemm_impl.h - the kernel table shared by gemm.c, cpu.c and the per-ISA
 * kernel files (internal to src/nn; not API).
 *
 * Each ISA file (gemm_ref.c, gemm_avx2.c, gemm_avxvnni.c,
 * gemm_avx512vnni.c) defines one const table; cpu.c picks one once. All
 * tables compute the same numbers: the int8 entries are bit-identical by
 * construction (integer sums, then the same float epilogue), and the
 * float32 entries sum every output over k in order with separate multiply
 * and add (no FMA), so they are bit-identical too. Layouts (built by
 * gemm.c, identical for every ISA):
 *   int8 weights: [n][k] bytes, each row 64-byte aligned (k % 64 == 0), so a
 *     column subset is just a list of row pointers;
 *   float weights: panels of FY_F32_PANEL columns, [npanels][k][16] floats.
 */
#ifndef FY_NN_GEMM_IMPL_H
#define FY_NN_GEMM_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "nn/cpu.h"

#define FY_F32_PANEL 16

/* Bytes of a's rows in panels of 16 (pack_a16 below). */
#define FY_I8_P16_BYTES(m, k) ((((size_t)(m) + 15) / 16) * 16 * (size_t)(k))

/* The largest k the VNNI entries take: pair indices fit in 16 bits, and
 * |exact sum| <= 254·127·k stays far inside int32. */
#define FY_I8_VNNI_MAX_K 65536

/* The weight pairs of an int8 layer whose int16 sum can saturate: a pair
 * (w[2p], w[2p+1]) of one sign with |w[2p]| + |w[2p+1]| > 129, because
 * then 254·(|w0| + |w1|) leaves [-32768, 32767]; no other pair can, for
 * any activations u in [0, 254]. Found once when a layer is built
 * (gemm.c). Column j (indexed as the kernel indexes w and bias; layer
 * column base + j) has pairs when bit base + j of any is set; they are
 * pair[off[base + j]] .. pair[off[base + j + 1] - 1] (pair index p:
 * k-values 2p and 2p + 1). any == NULL: no pair of the layer can
 * saturate. */
typedef struct fy_i8_sat {
    const uint64_t *any;  /* [(n + 63) / 64] bits: the columns with pairs */
    const uint32_t *off;  /* [n + 1] */
    const uint16_t *pair; /* [off[n]] */
    int32_t base;
} fy_i8_sat;

/* The correction that turns the exact sum of a·w over k into the
 * reference's pair-saturated one for column j: the sum over j's listed
 * pairs of sat16(s) - s, s = a0·w0 + a1·w1 (zero unless s saturates).
 * w: column j's k weights. */
static inline int32_t fy_i8_sat_fix(const uint8_t *a, const int8_t *w, const fy_i8_sat *sat,
                                    int32_t j)
{
    int32_t fix = 0;
    j += sat->base;
    for (uint32_t e = sat->off[j]; e < sat->off[j + 1]; e++) {
        int p = 2 * sat->pair[e];
        int32_t s = (int32_t)a[p] * w[p] + (int32_t)a[p + 1] * w[p + 1];
        int32_t c = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
        fix += c - s;
    }
    return fix;
}

/* 1 when column j has pairs to fix. */
static inline int fy_i8_sat_has(const fy_i8_sat *sat, int32_t j)
{
    j += sat->base;
    return (int)((sat->any[j >> 6] >> (j & 63)) & 1);
}

/* 1 when columns j (cols ? cols[c] : c for c in [c0, c0 + nc)) include one
 * with pairs to fix (sat may be NULL: none). */
static inline int fy_i8_sat_any(const fy_i8_sat *sat, const int32_t *cols, int c0, int nc)
{
    if (!sat || !sat->any) return 0;
    int any = 0;
    for (int c = c0; c < c0 + nc; c++) any |= fy_i8_sat_has(sat, cols ? cols[c] : c);
    return any;
}

/* Columns of a panel of the one-row layout (i8_gemv_il). */
#define FY_I8_IL_COLS 128

typedef struct fy_gemm_kernels {
    fy_isa isa;
    /* out[i] = clamp(rint(x[i]·mult), -127, 127) + 127, with intgemm's
     * cvtps semantics (|x·mult| >= 2^31 or NaN gives -127). count % 64 == 0. */
    void (*quantize_u8)(const float *x, size_t count, float mult, uint8_t *out);
    /* For rows i < m of a ([m][k] u8) and c < ncols:
     * y[i·ldy + c] = (float)acc(i, j) · unquant + bias[j], j = cols ? cols[c] : c,
     * acc as in gemm.h (int16 pair saturation); w: [n][k]; bias: indexed by j. */
    void (*i8_gemm)(const uint8_t *a, int m, int k, const int8_t *w, const int32_t *cols, int ncols,
                    float unquant, const float *bias, float *y, int ldy);
    /* The same results as i8_gemm, for k <= FY_I8_VNNI_MAX_K, computed with
     * the VNNI instruction vpdpbusd (exact sums of four products, no int16
     * stage) plus fy_i8_sat_fix for the pairs sat lists: exact, and fast
     * when few pairs can saturate. sat is indexed by j like bias. NULL on
     * paths without VNNI. */
    void (*i8_gemm_vnni)(const uint8_t *a, int m, int k, const int8_t *w, const fy_i8_sat *sat,
                         const int32_t *cols, int ncols, float unquant, const float *bias, float *y,
                         int ldy);
    /* Optional (NULL on paths without it), for many rows: pack_a16 lays
     * rows of a ([m][k]) out in panels of 16 rows, ap[p][k/4][16][4] (row
     * p·16 + l's bytes 4q .. 4q + 3 at ap + ((p·k/4 + q)·16 + l)·4; rows
     * past m zero), FY_I8_P16_BYTES(m, k) bytes, 64-byte aligned, k % 64
     * == 0 (as every int8 layer's); then
     * i8_gemm_p16 computes what i8_gemm (sat == NULL: the saturating
     * product) or i8_gemm_vnni (sat != NULL) computes, from a and ap. One
     * vector lane per row: a weight's four bytes are broadcast, so no lane
     * sums are reduced. */
    void (*pack_a16)(const uint8_t *a, int m, int k, uint8_t *ap);
    void (*i8_gemm_p16)(const uint8_t *a, const uint8_t *ap, int m, int k, const int8_t *w,
                        const fy_i8_sat *sat, const int32_t *cols, int ncols, float unquant,
                        const float *bias, float *y, int ldy);
    /* Optional (NULL on paths without it), for one row (a decoder step of
     * one sentence): the weights also laid out in panels of FY_I8_IL_COLS
     * columns, wil[n/128][k/4][128][4] (column j's bytes 4q .. 4q + 3 at
     * wil + ((j/128)·k/4 + q)·512 + (j%128)·4; packed by gemm.c), so that each
     * of a's k-quads is broadcast against 16 columns a vector and no lane
     * sums are reduced. i8_gemv_il computes what i8_gemm_vnni computes (sat
     * != NULL, sat->base % 64 == 0; w: the [n][k] rows, for the fixes) for
     * m = 1 and the columns 0 .. ncols - 1 of wil (ncols % 128 == 0). */
    void (*i8_gemv_il)(const uint8_t *a, int k, const int8_t *wil, const int8_t *w,
                       const fy_i8_sat *sat, int ncols, float unquant, const float *bias, float *y);
    /* For rows i < m of x ([m][k], row stride k) and columns c < ncols of the
     * panels (column c = panel c/16, lane c%16): y[i·ldy + c] = sum over kk in
     * order of x·w (acc starts at 0.0f, mul then add), then + bias[c] when
     * bias is non-NULL. */
    void (*f32_gemm)(const float *x, int m, int k, const float *panels, int ncols,
                     const float *bias, float *y, int ldy);
    /* fy_nn_attend (attention.h) in this path's vectors: one lane per score
     * and output element, so every path gives the same bits. */
    void (*attend)(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                   int ldv, int tk, int heads, int d, float *scores, float *out, int ldo);
    /* fy_expf_row (ops.h), the attention's, in this path's vectors. */
    void (*expf_row)(float *x, int n, float mx);
} fy_gemm_kernels;

/* The attention kernels (attend_kernel.h at 4, 8 and 16 lanes). */
void fy_attend_v4(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                  int ldv, int tk, int heads, int d, float *scores, float *out, int ldo);
void fy_expf_row_v4(float *x, int n, float mx);

extern const fy_gemm_kernels fy_gemm_ref;
#if defined(__x86_64__) || defined(__i386__)
#define FY_NN_X86 1
extern const fy_gemm_kernels fy_gemm_avx2;
extern const fy_gemm_kernels fy_gemm_avxvnni;
extern const fy_gemm_kernels fy_gemm_avx512vnni;
/* The AVX2 entries the AVX-VNNI table shares (gemm_avx2.c). */
void fy_avx2_quantize_u8(const float *x, size_t count, float mult, uint8_t *out);
void fy_avx2_i8_gemm(const uint8_t *a, int m, int k, const int8_t *w, const int32_t *cols,
                     int ncols, float unquant, const float *bias, float *y, int ldy);
void fy_avx2_f32_gemm(const float *x, int m, int k, const float *panels, int ncols,
                      const float *bias, float *y, int ldy);
void fy_attend_avx2(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                    int ldv, int tk, int heads, int d, float *scores, float *out, int ldo);
void fy_attend_avx512(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                      int ldv, int tk, int heads, int d, float *scores, float *out, int ldo);
void fy_expf_row_avx2(float *x, int n, float mx);
void fy_expf_row_avx512(float *x, int n, float mx);
#endif

/* The table for the selected path (cpu.c). */
const fy_gemm_kernels *fy_gemm_kernels_current(void);

/* The table for isa, or NULL if not compiled in (cpu.c). */
const fy_gemm_kernels *fy_gemm_kernels_for(fy_isa isa);

#endif
