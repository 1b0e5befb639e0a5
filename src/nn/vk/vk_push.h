/* vk_push.h - the push constants of each kernel, field for field the
 * `push_constant` block of its shader (internal to src/nn/vk). Offsets
 * (*_off) are in 32-bit words from the start of the bound buffer; strides
 * (ld*) in elements. Every kernel's specialization constants are passed in
 * full by vk_ops.c (a pipeline never relies on a shader's default). */
#ifndef FY_NN_VK_VK_PUSH_H
#define FY_NN_VK_VK_PUSH_H

#include <stdint.h>

/* quantize.comp: a[r][0..k) = u8 of x[r·ldx + 0..k) · mult. */
typedef struct fy_vk_push_quantize {
    uint32_t rows, k, ldx, x_off, a_off;
    float mult;
} fy_vk_push_quantize;

/* gemm_i8.comp, gemm_i8_dot.comp, gemm_f32.comp. flags: bit 0 column
 * list, bit 1 relu, bit 2 bias (gemm_f32; the int8 ones always have one). */
#define FY_VK_GEMM_COLS 1u
#define FY_VK_GEMM_RELU 2u
#define FY_VK_GEMM_BIAS 4u
typedef struct fy_vk_push_gemm {
    uint32_t m, ncols, k, ldy;
    uint32_t a_off, w_off, bias_off, y_off, cols_off;
    uint32_t j0, flags;
    float unquant;
} fy_vk_push_gemm;

typedef struct fy_vk_push_gemm_f32 {
    uint32_t m, ncols, k, ldy;
    uint32_t x_off, w_off, bias_off, y_off, cols_off;
    uint32_t j0, flags, ldx;
} fy_vk_push_gemm_f32;

typedef struct fy_vk_push_gemm_dot {
    fy_vk_push_gemm g;
    uint32_t fix_off, pair_off; /* the correction lists (vk_ops.h fy_vk_i8_fixups) */
} fy_vk_push_gemm_dot;

/* gemm_i8_rows.comp: with FY_VK_GEMM_PER_ROW, row i's columns are
 * cols[cols_off + start_i ..], n_i of them, from rows[rows_off + 2i], [.. + 1];
 * otherwise every row's ncols columns are the list (FY_VK_GEMM_COLS) or
 * j0 + c. */
#define FY_VK_GEMM_PER_ROW 8u
typedef struct fy_vk_push_gemm_rows {
    uint32_t m, k, ldy;
    uint32_t a_off, w_off, bias_off, y_off, cols_off, rows_off;
    uint32_t flags;
    float unquant;
    uint32_t j0, ncols;
} fy_vk_push_gemm_rows;

/* add_norm.comp: x = LN(x + y) row by row. */
typedef struct fy_vk_push_add_norm {
    uint32_t rows, d, ldx, ldy;
    uint32_t x_off, y_off, scale_off, bias_off;
} fy_vk_push_add_norm;

/* relu.comp. */
typedef struct fy_vk_push_relu {
    uint32_t n, off;
} fy_vk_push_relu;

/* ssru.comp: rows of d elements, each operand with its own stride. */
typedef struct fy_vk_push_ssru {
    uint32_t rows, d;
    uint32_t ld_cell, ld_f, ld_xw, ld_out;
    uint32_t cell_off, f_off, xw_off, out_off;
} fy_vk_push_ssru;

/* embed.comp. pos_step >= 0: every row at that position; -1: row r at
 * position posi[r]. int8: the table is bytes, values (float)q·inv. */
typedef struct fy_vk_push_embed {
    uint32_t rows, d, ldx;
    uint32_t x_off, table_off, pos_off, ids_off, posi_off;
    int32_t pos_step;
    uint32_t int8;
    float scale, inv;
} fy_vk_push_embed;

/* attend.comp. */
typedef struct fy_vk_push_attend {
    uint32_t nq, heads, dk;
    uint32_t ldq, ldk, ldv, ldo;
    uint32_t q_off, k_off, v_off, o_off, info_off;
    float scale;
} fy_vk_push_attend;

/* softmax.comp. */
typedef struct fy_vk_push_softmax {
    uint32_t rows, n, ld, off;
} fy_vk_push_softmax;

/* pick.comp and topk.comp. flags bit 0: identity columns (c is the id, n_all
 * of them) instead of the per-row lists. */
#define FY_VK_SELECT_IDENTITY 1u
typedef struct fy_vk_push_select {
    uint32_t rows, ldl;
    uint32_t l_off, cols_off, rows_off, out_off, path_off;
    uint32_t k;
    int32_t unk;
    uint32_t flags, n_all;
} fy_vk_push_select;

/* gather.comp: dst row j = src row from[j], words per row. */
typedef struct fy_vk_push_gather {
    uint32_t rows, words, lds, ldd;
    uint32_t src_off, dst_off, from_off;
} fy_vk_push_gather;

#endif
