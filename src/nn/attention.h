/* attention.h - the transformer blocks shared by the encoder and the decoder
 * (internal to src/nn and src/translate; not a public API).
 *
 * Marian's transformer, as the reference engine (bergamot-translator 0.4.9)
 * runs it for the Firefox Translations students:
 *   - every block is post-norm ("dan"): y = LayerNorm(block(x) + x), eps 1e-6;
 *   - multi-head attention projects q, k, v with their own affine layers,
 *     splits d into `heads` slices, scores each slice as (q·kᵀ)·(1/sqrt(d/heads))
 *     (the scale multiplies the finished dot product, as Marian's bdot
 *     alpha does), softmaxes over the keys, mixes the values, joins the
 *     heads and applies the output projection Wo + bo;
 *   - the feed-forward block is relu(x·W1 + b1)·W2 + b2.
 * Sentences are packed without padding: attention only ever looks at the
 * keys of its own sentence. Marian pads and adds -99999999 to the padded
 * scores, whose exponentials are exactly 0, so both give the same numbers.
 *
 * Float details follow the reference's WASM build exactly, because in int8
 * models every float feeds a rounding to int8 and a one-ulp difference can
 * flip a quantised activation and, later, a word: layer norm sums
 * sequentially and divides by sigma (seen in the WASM disassembly; a
 * partial-sum order cost ~0.5% of sentences); softmax rows whose length is a
 * multiple of 4 use four lanes with Cephes exp_ps, others musl's expf (fy_expf); the
 * SSRU gate is exp_ps(x)/(1+exp_ps(x)) as Marian's 4-lane sigmoid.
 *
 * Weights are bound by name once ("bind"); the forward functions take const
 * inputs and write into caller buffers, never allocating.
 */
#ifndef FY_NN_ATTENTION_H
#define FY_NN_ATTENTION_H

#include "model/marian.h"
#include "nn/gemm.h"
#include "util/error.h"

/* Layer-norm parameters, borrowed from the model mapping. */
typedef struct fy_nn_norm {
    const float *scale; /* [d] */
    const float *bias;  /* [d] */
} fy_nn_norm;

/* One attention block: name_{Wq,bq,Wk,bk,Wv,bv,Wo,bo,Wo_ln_scale,Wo_ln_bias}. */
typedef struct fy_nn_attn {
    fy_linear *wq; /* [d][d] + bq [d] */
    fy_linear *wk; /* [d][d] + bk [d] */
    fy_linear *wv; /* [d][d] + bv [d] */
    fy_linear *wo; /* [d][d] + bo [d] */
    fy_nn_norm ln; /* post-norm after the residual */
} fy_nn_attn;

/* One feed-forward block: name_{W1,b1,W2,b2,ffn_ln_scale,ffn_ln_bias}. */
typedef struct fy_nn_ffn {
    fy_linear *w1; /* [d][dffn] + b1 [dffn], then relu */
    fy_linear *w2; /* [dffn][d] + b2 [d] */
    fy_nn_norm ln;
} fy_nn_ffn;

/* Builds the linear layer y = x·W + b from tensors wname and bname (bname
 * NULL: no bias). W must be [k, n] as the header says; float32 (read as
 * [k][n]) or, in int8 models, intgemm8 (bytes [n][k]) with its activation
 * scale in the float32 tensor "<wname>_QuantMultA", read in place from the
 * mapped file (m must outlive the layer). Returns NULL with a message
 * naming the model file and tensor on any mismatch. */
fy_linear *fy_nn_bind_linear(const fy_marian *m, const char *wname, const char *bname, int k, int n,
                             fy_error *err);

/* Finds a float32 tensor of exactly count elements; NULL + message if not. */
const float *fy_nn_bind_floats(const fy_marian *m, const char *name, size_t count, fy_error *err);

/* name_ln_scale / name_ln_bias, d floats each. Returns 0 or a negative code. */
int fy_nn_norm_bind(const fy_marian *m, const char *name, int d, fy_nn_norm *out, fy_error *err);

/* Binds prefix's attention block of width d. On error nothing stays allocated. */
int fy_nn_attn_bind(const fy_marian *m, const char *prefix, int d, fy_nn_attn *a, fy_error *err);
void fy_nn_attn_free(fy_nn_attn *a);

/* Binds prefix's feed-forward block (d -> dffn -> d). */
int fy_nn_ffn_bind(const fy_marian *m, const char *prefix, int d, int dffn, fy_nn_ffn *f,
                   fy_error *err);
void fy_nn_ffn_free(fy_nn_ffn *f);

/* Scaled dot-product attention of one sentence, all heads:
 * out[i][h-slice] = softmax_j((q[i]·k[j])_h · scale) · v[j]_h for i < tq, j < tk.
 * q: tq rows of stride ldq; keys transposed: element c of key j at
 * kt[c·ldkt + j] (see fy_transpose); v: tk rows of stride ldv; out: tq
 * rows of stride ldo (d floats written per row). scores: tk floats of
 * scratch.
 *
 * Each score is a dot product over its head's dimensions, then scaled, in
 * the order of the reference: Marian's bdot of one head is one GEMM (the
 * WASM build's sgemm is Eigen 3.3's gebp kernel on 4-float packets) with
 * the keys as its lhs rows and the queries as its rhs columns. It sums in
 * order over the dimensions, except for the scores of a key past the last
 * multiple of four keys (the rows its packet kernels leave over) with a
 * query of a complete block of four queries (its 4-column panels): those
 * it sums in four partial sums, dimension c in sum c % 4, added as
 * (s0 + s1) + (s2 + s3). So with tq, tk >= 4 and tk % 4 != 0, the last
 * tk % 4 keys of queries below 4·floor(tq/4) are summed that way; with one
 * query (the decoder) every score is in order. The weighted sum of the
 * values is in order over the keys (its lhs rows are the head's dk
 * dimensions, a multiple of 4). tq must therefore be the reference's
 * number of queries: one sentence's tokens, unpadded, as the reference
 * translates one sentence at a time in the conformance tests. */
void fy_nn_attend(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                  int ldv, int tk, int heads, int d, float *scores, float *out, int ldo);

/* x = LayerNorm(x + y) row-wise, rows of d floats; 16 rows or more go to
 * the calling thread's team (fy_par_attached) in blocks, the same bits. */
void fy_nn_add_norm(float *x, const float *y, int rows, int d, const fy_nn_norm *ln);

/* The feed-forward block in place on x [rows][d], rows at a time in slices
 * of at most `block` rows: hidden [block][dffn] and out [block][d] are
 * scratch, scratch is the linear layers' scratch for block rows. */
void fy_nn_ffn_forward(const fy_nn_ffn *f, float *x, int rows, int d, int block, float *hidden,
                       float *out, void *scratch);

#endif
