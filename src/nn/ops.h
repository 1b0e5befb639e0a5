/* ops.h - float32 elementwise and row operations of the transformer.
 *
 * Row-major matrices, in place where noted. Every function gives the same
 * bits on every machine (no ISA-dependent summation order), so a
 * translation never depends on the CPU. No allocation.
 */
#ifndef FY_NN_OPS_H
#define FY_NN_OPS_H

#include <stddef.h>

/* In place, each of rows rows of d floats: (x - mean) / sqrt(var + eps) ·
 * gamma + beta, var = mean of squared deviations (Marian's
 * LayerNormalization). gamma/beta: d floats; beta may be NULL. */
void fy_layer_norm(float *x, int rows, int d, const float *gamma, const float *beta, float eps);

/* The post-norm residual step in one pass per row: x = layer_norm(x + res)
 * (res: rows x d). Bit-identical to fy_add then fy_layer_norm. */
void fy_add_layer_norm(float *x, const float *res, int rows, int d, const float *gamma,
                       const float *beta, float eps);

/* In place, each row of n floats: exp(x - max) / sum. */
void fy_softmax_rows(float *x, int rows, int n);

/* In place: x = max(x, 0). */
void fy_relu(float *x, size_t n);

/* In place: Marian's stable sigmoid: x > 0 ? 1/(1+e^-x) : e^x/(1+e^x). */
void fy_sigmoid(float *x, size_t n);

/* y += x. */
void fy_add(float *y, const float *x, size_t n);

/* Each of rows rows of n floats: y[r][j] += b[j]. */
void fy_add_bias(float *y, int rows, int n, const float *b);

/* In place: x[r][i] += Marian's sinusoidal signal for position start_pos + r:
 * with h = d/2 and s = log(10000)/(h - 1), dims [0, h) add
 * sin(pos·exp(-i·s)) and dims [h, d) add cos(pos·exp(-(i-h)·s)).
 * (Marian first scales the embeddings by sqrt(d): the caller does that.)
 * d must be even. */
void fy_positional_add(float *x, int rows, int d, int start_pos);

/* The same signal written (not added) into out[rows][d]: lets the caller
 * precompute a table once per model. */
void fy_positional_fill(float *out, int rows, int d, int start_pos);

/* exp(x) as the ops compute it (about 1 ulp; 0 below -87.33; x <= 88.37). */
float fy_expf(float x);

/* y = x·s elementwise in place. */
void fy_scale(float *x, size_t n, float s);

#endif
