/* vk_ops.h - the network's operations as Vulkan dispatches, each giving the
 * CPU engine's bits (internal to src/nn; built with FANYI_VULKAN; see
 * docs/gpu.md for the layouts, the float rules and the tests).
 *
 * Each fy_vk_op_* records one dispatch into a recording recorder (vk.h):
 * nothing runs until fy_vk_cmd_submit. Arguments are checked here (shapes,
 * limits, 4-byte alignment of every fy_vk_ref); a bad one returns FY_EINVAL
 * or FY_ELIMIT and is also kept as the recorder's first error, which
 * fy_vk_cmd_submit returns (so a sequence may be checked once). Unless the
 * caller groups commands with fy_vk_cmd_parallel, each op waits for the
 * ones recorded before it.
 *
 * Data layouts (all row-major; "ld" = elements between rows):
 *   float tensors: [rows][ld] float32;
 *   int8 weights:  [n][k] bytes (row j = output j's k weights, k % 64 == 0),
 *                  exactly fy_linear's (gemm.h), uploaded as they are;
 *   u8 activations: [m][k] bytes, fy_vk_op_quantize's output;
 *   int32 lists:   int32_t arrays (ids, columns, row maps).
 * The CPU function each op mirrors is named at the op; its comment there
 * is the specification.
 */
#ifndef FY_NN_VK_VK_OPS_H
#define FY_NN_VK_VK_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "nn/vk/vk.h"

/* Limits of the shaders (shared memory) and the few-row GEMM path. */
#define FY_VK_NORM_MAX_D    2048 /* add_norm: row width */
#define FY_VK_ATTEND_MAX_TK 1024 /* attend, softmax: keys per query, row length */
#define FY_VK_ATTEND_MAX_DK 512  /* attend: dimensions per head */
#define FY_VK_TOPK_MAX      16   /* topk: k (k + 1 candidates per row) */
#define FY_VK_ROWS_MAX_K    4096 /* gemm_i8_rows: inputs (activations in shared memory) */
#define FY_VK_GEMV_ROWS     8    /* gemm_i8 up to this many rows: one workgroup per row */

/* a[r][0..k) = clamp(rint(x[r·ldx + i]·mult), -127, 127) + 127 as bytes
 * (gemm_ref.c ref_quantize_u8, intgemm's semantics: NaN and |x·mult| >= 2^31
 * give -127). x: float [rows][ldx]; a: u8 [rows][k]; k % 4 == 0 (64 for
 * the GEMMs). */
int fy_vk_op_quantize(fy_vk_cmd *c, fy_vk_ref x, int ldx, int rows, int k, float mult, fy_vk_ref a);

/* One int8 linear layer's operands: what gemm.c prepared at load time. */
typedef struct fy_vk_i8_layer {
    fy_vk_ref w;    /* s8 [n][k] */
    fy_vk_ref bias; /* float [n]: gemm.c's bias' (bias + colsum·factor), indexed by j */
    int n, k;       /* k % 64 == 0 */
    float unquant;  /* 1/(a_mult·w_mult) */
} fy_vk_i8_layer;

/* y[i·ldy + c] = (float)acc(i, j)·unquant + bias[j] for i < m, c < ncols
 * (gemm_ref.c ref_i8_gemm; acc with int16 pair saturation, gemm.h), j =
 * cols[c] when cols.buf is set (int32 ids, each < n), else j0 + c
 * (j0 + ncols <= n). relu != 0 applies x > 0 ? x : 0 to each output (the
 * feed-forward block's relu, fused: same bits as fy_relu afterwards).
 * a: u8 [m][k]. Tiles of 64 x 64 outputs (with hardware dot products:
 * fy_vk_op_gemm_i8_dot's pair mode); up to FY_VK_GEMV_ROWS rows, one
 * workgroup per row and 64 columns instead. Every way gives the same bits. */
int fy_vk_op_gemm_i8(fy_vk_cmd *c, const fy_vk_i8_layer *l, fy_vk_ref a, int m, fy_vk_ref cols,
                     int ncols, int j0, int relu, fy_vk_ref y, int ldy);

/* The weight pairs of w ([n][k] s8) that can saturate the int16 pair sum
 * (u·w0 + u'·w1 with u, u' in 0..254: only when w0 and w1 have the same
 * sign and |w0| + |w1| > 129), listed per output row for
 * fy_vk_op_gemm_i8_dot: row j's pair indices p (bytes 2p, 2p + 1) are
 * pairs[start[j] .. start[j+1]). start: n + 1 uint32; pairs NULL counts
 * only. Returns the number of pairs; a device should prefer the dot path
 * only when it is a small share of n·k/2. */
size_t fy_vk_i8_fixups(const int8_t *w, int n, int k, uint32_t *start, uint32_t *pairs);

/* fy_vk_op_gemm_i8's result (the same bits) through 4-way dot products
 * (dp4a): with start.buf set, exact sums plus the fixups of the listed pairs
 * (start and pairs uploaded from fy_vk_i8_fixups of this layer's weights);
 * with start.buf NULL, each pair as a dot product with the other pair
 * masked out, saturated (no list; what fy_vk_op_gemm_i8 runs on devices
 * whose dot products are accelerated). Only on devices with
 * shaderIntegerDotProduct (fy_vk_info.int_dot); FY_EUNSUPPORTED at submit
 * otherwise. */
int fy_vk_op_gemm_i8_dot(fy_vk_cmd *c, const fy_vk_i8_layer *l, fy_vk_ref start, fy_vk_ref pairs,
                         fy_vk_ref a, int m, fy_vk_ref cols, int ncols, int j0, int relu,
                         fy_vk_ref y, int ldy);

/* The same per row with its own column list (the shortlisted output layer
 * of many rows): row i computes the columns cols[start_i .. start_i + n_i)
 * where rowcols holds int32 pairs (start_i, n_i), i < m, and writes its
 * c-th value at y[i·ldy + c]. max_n >= every n_i (sizes the dispatch). */
int fy_vk_op_gemm_i8_rows(fy_vk_cmd *c, const fy_vk_i8_layer *l, fy_vk_ref a, int m, fy_vk_ref cols,
                          fy_vk_ref rowcols, int max_n, int relu, fy_vk_ref y, int ldy);

/* One float32 linear layer (float models): w [n][k] (row j = output j, the
 * transpose of the file's [k][n] tensor: fy_transpose), bias n floats
 * (bias.buf NULL: none). */
typedef struct fy_vk_f32_layer {
    fy_vk_ref w, bias;
    int n, k;
} fy_vk_f32_layer;

/* y[i·ldy + c] = sum over kk in order of x[i·ldx + kk]·w[j][kk] (from 0,
 * products and sums rounded one by one) + bias[j] if any (gemm_ref.c
 * ref_f32_gemm, the arithmetic of every CPU path), relu if asked; columns
 * as fy_vk_op_gemm_i8 (a list, or j0 + c). Any k > 0. */
int fy_vk_op_gemm_f32(fy_vk_cmd *c, const fy_vk_f32_layer *l, fy_vk_ref x, int ldx, int m,
                      fy_vk_ref cols, int ncols, int j0, int relu, fy_vk_ref y, int ldy);

/* x = LayerNorm(x + y) row by row (ops.c fy_add_layer_norm): rows of d
 * floats at x (stride ldx, updated in place) and y (ldy); scale, bias: d
 * floats. d <= FY_VK_NORM_MAX_D. */
int fy_vk_op_add_norm(fy_vk_cmd *c, fy_vk_ref x, int ldx, fy_vk_ref y, int ldy, int rows, int d,
                      fy_vk_ref scale, fy_vk_ref bias);

/* x = x > 0 ? x : 0 over n floats (ops.c fy_relu). */
int fy_vk_op_relu(fy_vk_cmd *c, fy_vk_ref x, size_t n);

/* The SSRU cell update over rows of d floats (ops.c fy_ssru_cell): cell
 * (updated), f (forget-gate pre-activation), xw (candidate), out = relu of
 * the new cell; each with its own row stride. */
int fy_vk_op_ssru(fy_vk_cmd *c, int rows, int d, fy_vk_ref cell, int ld_cell, fy_vk_ref f, int ld_f,
                  fy_vk_ref xw, int ld_xw, fy_vk_ref out, int ld_out);

/* The embedding input (encoder.c fy_nn_embed; translator.c's int8 embed):
 * x[r·ldx + i] = e·scale + pos[p_r·d + i] for r < rows, i < d, where
 * e = table[id_r·d + i] (float table, int8 == 0) or (float)q·inv (int8
 * table: bytes q), id_r = ids[r], and id_r < 0 means the start (e = 0·scale).
 * Positions: p_r = pos_step when pos_step >= 0 (a decoder step), else
 * posi[r] (int32 per row: the encoder's position within its sentence; see
 * fy_vk_embed_positions). pos: the sinusoid table [npos][d] from
 * fy_positional_fill. */
int fy_vk_op_embed(fy_vk_cmd *c, fy_vk_ref x, int ldx, int rows, int d, fy_vk_ref table, int int8,
                   float inv, float scale, fy_vk_ref ids, fy_vk_ref pos, int pos_step,
                   fy_vk_ref posi);

/* posi for fy_vk_op_embed over ns packed sentences (off/len as the
 * encoder's): posi[off[s] + t] = t. */
void fy_vk_embed_positions(const int *off, const int *len, int ns, int32_t *posi);

/* Scaled dot-product attention (attention.h fy_nn_attend) for nq query
 * rows, all heads (dk = d/heads floats each, dk <= FY_VK_ATTEND_MAX_DK):
 * q, k, v, out are [rows][ld] with the heads side by side; keys are rows
 * like the values (not transposed as the CPU's kt: the float operations are
 * the same). info: int32 [nq][4] from fy_vk_attend_info_*: query i reads
 * keys and values k0_i .. k0_i + tk_i - 1 (tk_i <= FY_VK_ATTEND_MAX_TK).
 * scale: 1/sqrtf(dk) as the CPU computes it (fy_vk_attend_scale). */
int fy_vk_op_attend(fy_vk_cmd *c, int nq, int heads, int dk, fy_vk_ref q, int ldq, fy_vk_ref k,
                    int ldk, fy_vk_ref v, int ldv, fy_vk_ref out, int ldo, fy_vk_ref info,
                    float scale);

/* 1.0f / sqrtf((float)dk), the CPU's attention scale. */
float fy_vk_attend_scale(int dk);

/* info for the encoder's self-attention over ns packed sentences: query row
 * off[s] + t sees rows off[s] .. off[s]+len[s]-1, and is split (the last
 * len % 4 keys in four partial sums) when t < len/4·4 (attend_kernel.h);
 * writes 4·(sum of len) int32. */
void fy_vk_attend_info_encoder(const int *off, const int *len, int ns, int32_t *info);

/* info for the decoder's cross-attention: row r sees its sentence's keys
 * src_off[r] .. + src_len[r] - 1, one query (never split); 4·rows int32. */
void fy_vk_attend_info_decoder(const int *src_off, const int *src_len, int rows, int32_t *info);

/* Softmax of rows of n floats (stride ld) in place (ops.c fy_softmax);
 * n <= FY_VK_ATTEND_MAX_TK. */
int fy_vk_op_softmax(fy_vk_cmd *c, fy_vk_ref x, int ld, int rows, int n);

/* The columns a selection sees, per row: a list (cols: int32 ids; rowcols:
 * int32 pairs (start_r, n_r)), or all ids 0 .. n_all-1 when cols.buf is
 * NULL. Logits: row r's c-th column at logits[r·ldl + c]. */
typedef struct fy_vk_select {
    fy_vk_ref logits;
    int ldl, rows;
    fy_vk_ref cols, rowcols;
    int n_all;
    int unk; /* the id never chosen (<unk>); -1: none */
} fy_vk_select;

/* Greedy choice per row (translator.c pick): out gets rows × {int32 id,
 * float value, float gap} = fy_nn_pick: the best column's id (-1 if none
 * allowed), its logit (-inf if none), best − second best (-inf when only
 * one); ties go to the earlier column. */
int fy_vk_op_pick(fy_vk_cmd *c, const fy_vk_select *s, fy_vk_ref out);

/* Beam candidates per row (beam.c best_candidates on one row): the k + 1
 * best of path[r] + logit (float add) in order, ties by column, never unk.
 * out per row r at word r·fy_vk_topk_stride(k): the count n (<= k + 1),
 * then k + 1 scores (float), then k + 1 ids (int32); the first n are set.
 * 1 <= k <= FY_VK_TOPK_MAX. path: float [rows]. */
int fy_vk_op_topk(fy_vk_cmd *c, const fy_vk_select *s, fy_vk_ref path, int k, fy_vk_ref out);

/* Words per row of fy_vk_op_topk's output: 1 + 2(k + 1). */
static inline int fy_vk_topk_stride(int k)
{
    return 1 + 2 * (k + 1);
}

/* dst row j = src row from[j] for j < rows (rows of `words` 32-bit words,
 * strides lds and ldd words; from: int32). Keeps or reorders state rows
 * (SSRU cells) without float arithmetic; src and dst must not overlap. */
int fy_vk_op_gather(fy_vk_cmd *c, fy_vk_ref src, int lds, fy_vk_ref dst, int ldd, int words,
                    fy_vk_ref from, int rows);

#endif
