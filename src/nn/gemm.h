/* gemm.h - linear layers y = x·W + b, int8 (int8shiftAlphaAll) and float32.
 *
 * A layer is built once at load time from a model file's tensors, for the
 * kernel path selected at that moment (see cpu.h), and is read-only
 * afterwards: any number of threads may run fy_linear_forward on it at once,
 * each with its own scratch. int8 weights stay in rows ([n][k], 64-byte
 * aligned), which every path reads directly, so a column subset (the
 * shortlisted output layer) is just a list of rows; float weights are packed
 * in panels of 16 columns.
 *
 * int8 arithmetic (Marian gemm-precision int8shiftAlphaAll, as intgemm's
 * Int8Shift computes it inside the reference engine):
 *   - activations: u = clamp(rint(x·a_mult), -127, 127) + 127, as uint8
 *     (rint: round half to even);
 *   - accumulation: acc[i][j] = sum over pairs p of
 *         sat16(u[2p]·w[j][2p] + u[2p+1]·w[j][2p+1])
 *     where sat16 clamps to [-32768, 32767]: the pair-wise int16 saturation
 *     of SSSE3/AVX2 pmaddubsw; the pair sums are then added exactly in int32;
 *   - output: y = (float)acc · unquant + bias', unquant = 1/(a_mult·w_mult),
 *     bias' = bias + (float)colsum(w[j]) · (-(127/a_mult)·(127/w_mult)/127),
 *     both products and sums rounded in float32 without FMA, as the reference.
 *
 * float32 arithmetic: y = (((0 + x[0]·w[0]) + x[1]·w[1]) + ...) + bias,
 * every product and sum rounded separately (no FMA) in k order, on every
 * path: float results are bit-identical across paths too.
 *
 * DECISION (saturation): every path (ref, avx2, avxvnni, avx512vnni)
 * reproduces the int16 pair saturation, so all give bit-identical int32
 * sums to each other and to the reference engine, and identical floats.
 * Whether a pair u0·w0 + u1·w1 (u in [0, 254]) can saturate depends on the
 * weights alone: only when w0 and w1 share a sign and |w0| + |w1| > 129,
 * i.e. |w0 + w1| > 129. A layer finds those pairs when it is built. On a
 * VNNI path, a layer where at most one pair in 512 can saturate (trained
 * weights: a handful per matrix) runs vpdpbusd, which sums four products
 * exactly at twice the rate of the saturating pair instructions, and then
 * adds sat16(s) - s for each of its listed pairs and each row (zero unless
 * that pair saturated): the same int32 sums. Other layers (uniform random
 * weights: a quarter of all pairs) keep vpmaddubsw, saturating by
 * construction, widened by vpdpwssd.
 */
#ifndef FY_NN_GEMM_H
#define FY_NN_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "nn/cpu.h"
#include "util/error.h"

typedef struct fy_linear fy_linear;

/* int8 layer. w: the file's int8 bytes laid out [n][k] (row j = output j's k
 * weights; borrowed, only read during the call), w_mult: the tensor's
 * quant_mult (127/max|W|), a_mult: the X_QuantMultA value, bias: n floats or
 * NULL (borrowed). k must be a positive multiple of 64 and n a positive
 * multiple of 8 (FY_EUNSUPPORTED otherwise); a_mult and w_mult must be finite
 * and > 0 (FY_EINVAL). Returns the layer or NULL with err set. */
fy_linear *fy_linear_new_i8(const int8_t *w, int n, int k, float w_mult, float a_mult,
                            const float *bias, fy_error *err);

/* As fy_linear_new_i8, but when w is 64-byte aligned the layer reads it in
 * place instead of copying it: w must then stay mapped and unchanged until
 * fy_linear_free. For weights in a mapped model file (data 256-byte
 * aligned), this keeps one copy of them in memory, the file's pages, which
 * the kernel can drop and re-read, instead of two. */
fy_linear *fy_linear_view_i8(const int8_t *w, int n, int k, float w_mult, float a_mult,
                             const float *bias, fy_error *err);

/* float32 layer. w: laid out [k][n] as in the file (row-major [in][out]);
 * bias: n floats or NULL; both borrowed. Any positive k, n.
 * Returns the layer or NULL with err set. */
fy_linear *fy_linear_new_f32(const float *w, int k, int n, const float *bias, fy_error *err);

/* float32 layer from weights laid out [n][k] (row j = output j's k weights,
 * e.g. a tied float Wemb used as the output layer). Same results, bit for
 * bit, as fy_linear_new_f32 on the transposed matrix; keeps the weights in
 * rows, which makes column subsets (a shortlist) cheap but a full product
 * somewhat slower: use it for the output layer. */
fy_linear *fy_linear_new_f32_nk(const float *w, int n, int k, const float *bias, fy_error *err);

/* Frees l; NULL is harmless. */
void fy_linear_free(fy_linear *l);

int fy_linear_in(const fy_linear *l);  /* k */
int fy_linear_out(const fy_linear *l); /* n */

/* int8: the weight pairs of l whose int16 sum can saturate for some
 * activations (see DECISION below); 0 for a float layer. */
size_t fy_linear_sat_pairs(const fy_linear *l);

/* 1 when l runs on the VNNI product with saturation fixes (the path has
 * VNNI and few of l's pairs can saturate), else 0. */
int fy_linear_vnni(const fy_linear *l);

/* For an int8 layer that mostly runs at one row (a decoder step's): keeps
 * a second copy of its weights in the layout the kernel path reads fastest
 * at one row, if the path has one (AVX-512), the layer runs on the VNNI
 * product (fy_linear_vnni: trained weights) and n % 128 == 0; otherwise
 * nothing. Results are the same bits either way. Call before the layer is
 * shared. Returns 0, or FY_ENOMEM with err set. */
int fy_linear_prepare_one_row(fy_linear *l, fy_error *err);

/* The bytes of that copy (0 without one). */
size_t fy_linear_one_row_bytes(const fy_linear *l);

/* The pairs (w[2p], w[2p+1]) of rows rows of k int8 values each that can
 * saturate int16 for some u in [0, 254]: those with |w[2p] + w[2p+1]| > 129. */
size_t fy_i8_saturating_pairs(const int8_t *w, size_t rows, int k);

/* Scratch bytes fy_linear_forward needs for m rows (the quantised
 * activations and, for column subsets, a gather buffer). */
size_t fy_linear_scratch_bytes(const fy_linear *l, int m);

/* y[m][ncols] = x[m][k]·W[:, cols] + b[cols]. cols: ncols output ids, sorted
 * ascending, each in [0, n); cols == NULL means all n columns (ncols is
 * then ignored). scratch: at least fy_linear_scratch_bytes(l, m) bytes,
 * 64-byte aligned, owned by the calling thread. x and y must not overlap.
 * Never allocates; the output for a column is identical whether it is
 * computed alone, in a subset or with all columns. */
void fy_linear_forward(const fy_linear *l, const float *x, int m, const int32_t *cols, int ncols,
                       void *scratch, float *y);

/* fy_linear_forward writing row i of the result at y + i·ldy (ldy >= the
 * number of columns computed): lets a caller place several layers' outputs
 * side by side, or split one product across threads by column ranges
 * (cols = a slice of ids, y = the matching columns of a wider buffer). */
void fy_linear_forward_ex(const fy_linear *l, const float *x, int m, const int32_t *cols, int ncols,
                          void *scratch, float *y, int ldy);

/* fy_linear_forward of all columns, then y = max(y, 0) (fy_relu), the same
 * bits: each thread of a shared product clears its own columns while they
 * are in its cache (a feed-forward block's first layer). */
void fy_linear_forward_relu(const fy_linear *l, const float *x, int m, void *scratch, float *y);

/* The most layers fy_linear_forward_set takes. */
#define FY_LINEAR_SET_MAX 3

/* fy_linear_forward of x (m rows) through each of ls[0 .. count) into
 * ys[i] (all its columns), the same bits, as one job for the calling
 * thread's team (fy_par_attached): one hand-off to its helpers instead of
 * count, for layers reading the same input (an attention's query, key and
 * value; a decoder layer's SSRU). A layer whose activation multiplier,
 * width and kernels equal an earlier one's reads that one's quantised
 * input instead of quantising x again. 1 <= count <= FY_LINEAR_SET_MAX.
 * scratch: fy_linear_set_scratch_bytes(ls, count, m) bytes, 64-byte
 * aligned (a quantised copy for each layer that makes one). */
void fy_linear_forward_set(const fy_linear *const *ls, int count, const float *x, int m,
                           void *scratch, float *const *ys);
size_t fy_linear_set_scratch_bytes(const fy_linear *const *ls, int count, int m);

/* What an int8 layer computes with, for a device backend that uploads it
 * (src/nn/vk): its weights [n][k] (64-byte aligned rows), the prepared
 * bias' (n floats, see above), the activation multiplier and unquant. All
 * borrowed from l. */
typedef struct fy_linear_i8_parts {
    const int8_t *w;
    const float *bias;
    int n, k;
    float a_mult, unquant;
} fy_linear_i8_parts;

/* Fills *out for an int8 layer and returns 0; FY_EINVAL for a float one. */
int fy_linear_i8_parts_get(const fy_linear *l, fy_linear_i8_parts *out);

/* Quantises float weights the way the reference prepares a float matrix for
 * int8 (used for a tied float Wemb as the output layer): out[i] =
 * clamp(rint(w[i]·mult), -127, 127). Pair it with mult = fy_i8_weight_mult(). */
void fy_i8_quantize(const float *w, size_t count, float mult, int8_t *out);

/* 127 / max|w[i]| computed in float32, as the reference does; 1 if all zero. */
float fy_i8_weight_mult(const float *w, size_t count);

#endif
