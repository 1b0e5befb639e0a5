/* ops.h - the float32 elementwise and row operations of the transformer,
 * computed exactly as the reference engine computes them.
 *
 * In int8 models every float feeds a rounding to int8, and a one-ulp
 * difference can flip a quantised activation and, later, a word. So each
 * function here performs the reference's float operations (Marian's CPU
 * operators as bergamot-translator's WASM build runs them) in the
 * reference's order. Vector code (GCC vector extensions: SSE2, part of
 * every x86-64 CPU, or plain scalar code elsewhere) only ever puts
 * independent results in different lanes, so every machine and every
 * kernel path gets the same bits. No allocation.
 */
#ifndef FY_NN_OPS_H
#define FY_NN_OPS_H

#include <stddef.h>

/* Marian's layer-norm epsilon. */
#define FY_LN_EPS 1e-6f

/* exp(x) as Cephes' exp_ps (sse_mathfun.h) computes one lane: clamp to
 * ±88.376, n = floor(x·log2e + 0.5), two-part reduction, degree-5
 * polynomial, scaled by 2^n through the exponent bits. */
float fy_exp_ps(float x);

/* expf as musl computes it (the algorithm of ARM's optimized routines, in
 * double: 2^(k/32) from a table times a cubic in the reduced argument),
 * every operation rounded separately (no FMA): the expf of the reference's
 * WASM build. glibc's expf is the same algorithm with fused multiply-adds
 * where the CPU has them, which differs from this at two floats
 * (x = -0x1.f8cbb2p+5 and 0x1.04845ep+5, by one ulp); calling this instead
 * gives the same bits on every machine and on the GPU (nn/vk). Results
 * within 0.502 ulp of exp(x); 0 below -0x1.9fe368p6, +inf above 0x1.62e42ep6. */
float fy_expf(float x);

/* Marian's CPU softmax of one row in place: rows whose length is a multiple
 * of 4 run on four lanes (exp_ps, a running sum per lane, the lanes added
 * in order); others run scalar with fy_expf (the reference's musl expf) and
 * one running sum. Then every element is divided by the sum. */
void fy_softmax(float *x, int n);

/* x[i] = fy_expf(x[i] - mx) for i < n: the exponentials of a row of
 * fy_softmax that is not a multiple of 4 long. fy_expf_row computes them
 * one by one; the attention kernels pass one that computes several at a
 * time in vector lanes, with fy_expf's bits. */
typedef void (*fy_expf_row_fn)(float *x, int n, float mx);
void fy_expf_row(float *x, int n, float mx);

/* fy_softmax with exps for those rows. */
void fy_softmax_with(float *x, int n, fy_expf_row_fn exps);

/* x = LayerNorm(x + y) row by row (rows of d floats): mean and variance are
 * summed sequentially in one float each, sigma = sqrt(var/d + eps), and
 * out = scale·((x − mean)/sigma) + bias with a true division. */
void fy_add_layer_norm(float *x, const float *y, int rows, int d, const float *scale,
                       const float *bias);

/* In place: x = max(x, 0). */
void fy_relu(float *x, size_t n);

/* The SSRU cell update, elementwise over n floats: g = σ(f) computed as
 * exp_ps(f)/(1 + exp_ps(f)) (Marian's 4-lane sigmoid), cell = g·cell +
 * (1 − g)·xw (its highway op, in that order), out = relu(cell). */
void fy_ssru_cell(float *cell, const float *f, const float *xw, float *out, size_t n);

/* xt[c][r] = x[r][c] for x [rows][d]. */
void fy_transpose(const float *x, int rows, int d, float *xt);

/* The same for the first cols columns of rows of stride ldx (one head's
 * slice of a matrix): xt [cols][rows]. */
void fy_transpose_cols(const float *x, int rows, int cols, int ldx, float *xt);

/* Marian's sinusoidal position signal for positions start_pos ..
 * start_pos + rows − 1 written into out[rows][d]: with h = d/2 and
 * s = log(10000)/(h − 1), dims [0, h) hold sin(pos·exp(−i·s)) and dims
 * [h, d) cos(pos·exp(−(i−h)·s)), in Marian's float32 steps. d even. */
void fy_positional_fill(float *out, int rows, int d, int start_pos);

#endif
