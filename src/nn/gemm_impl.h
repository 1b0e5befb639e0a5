/* gemm_impl.h - the kernel table shared by gemm.c, cpu.c and the per-ISA
 * kernel files (internal to src/nn; not API).
 *
 * Each ISA file (gemm_ref.c, gemm_avx2.c, gemm_avx512vnni.c) defines one
 * const table; cpu.c picks one once. All tables compute the same numbers:
 * the int8 entries are bit-identical by construction (integer sums, then the
 * same float epilogue), and the float32 entries sum every output over k in
 * order with separate multiply and add (no FMA), so they are bit-identical
 * too. Layouts (built by gemm.c, identical for every ISA):
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
} fy_gemm_kernels;

/* The attention kernels (attend_kernel.h at 4 and 8 lanes). */
void fy_attend_v4(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                  int ldv, int tk, int heads, int d, float *scores, float *out, int ldo);

extern const fy_gemm_kernels fy_gemm_ref;
#if defined(__x86_64__) || defined(__i386__)
#define FY_NN_X86 1
extern const fy_gemm_kernels fy_gemm_avx2;
extern const fy_gemm_kernels fy_gemm_avx512vnni;
void fy_attend_avx2(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                    int ldv, int tk, int heads, int d, float *scores, float *out, int ldo);
#endif

/* The table for the selected path (cpu.c). */
const fy_gemm_kernels *fy_gemm_kernels_current(void);

/* The table for isa, or NULL if not compiled in (cpu.c). */
const fy_gemm_kernels *fy_gemm_kernels_for(fy_isa isa);

#endif
