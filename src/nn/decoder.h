/* decoder.h - the SSRU transformer decoder of a Marian student model
 * (internal to the engine: src/translate/translator.c is its only user).
 *
 * One decoding step for a set of active sentences ("rows"): each row's
 * input embedding goes through dec_depth layers of
 *   SSRU      f = σ(x·Wf + bf), c = f⊙c + (1−f)⊙(x·W), y = LN(relu(c) + x)
 *   context   cross-attention over the row's own encoder context
 *   FFN       relu(x·W1 + b1)·W2 + b2, post-norm
 * and the tied output layer turns the top states into logits over a set of
 * target columns (all, or a shortlist). The cross-attention keys and values
 * are projected once per batch (fy_decoder_prepare); the SSRU cells are the
 * only state carried between steps. Rows never influence each other, so a
 * sentence's result does not depend on the batch it is in.
 */
#ifndef FY_NN_DECODER_H
#define FY_NN_DECODER_H

#include <stddef.h>
#include <stdint.h>

#include "model/marian.h"
#include "nn/attention.h"
#include "util/error.h"

typedef struct fy_decoder fy_decoder;

/* Caller-provided buffers, sized for max_rows rows (sentences) and
 * sources of at most max_len tokens. */
typedef struct fy_decoder_scratch {
    float *xw, *f, *q, *ctx, *o; /* [max_rows][d] each */
    float *hidden;               /* [max_rows][dffn] */
    float *scores;               /* [max_len] */
    void *lin;                   /* fy_decoder_linear_scratch(dec, max_rows) bytes, 64-aligned */
} fy_decoder_scratch;

/* What one step needs to know about its rows. */
typedef struct fy_decoder_rows {
    int rows;            /* active sentences */
    const int *src_off;  /* [rows] first row of the sentence's source in keys/values */
    const int *src_len;  /* [rows] its length */
    const float *keys;   /* [dec_depth][ntok·d]: fy_decoder_prepare's output */
    const float *values; /* [dec_depth][ntok][d] */
    int ntok;            /* rows of keys/values per layer */
    float *state;        /* [dec_depth][state_stride][d] SSRU cells, row r at r */
    int state_stride;
} fy_decoder_rows;

/* The target embeddings [vocab][d] the output layer is tied to: float32
 * (f32), or the int8 rows of an intgemm8 tensor (i8) whose values are
 * (float)q·inv. Exactly one of f32 and i8 is set. */
typedef struct fy_nn_embedding {
    const float *f32;
    const int8_t *i8;
    float inv;
} fy_nn_embedding;

/* Binds decoder_l1 .. decoder_l<depth> and the output layer, tied to the
 * target embeddings emb (borrowed; only read here) with bias
 * decoder_ff_logit_out_b. emb must view the data of the file's Wemb or
 * decoder_Wemb tensor. int8 models (int8 != 0) quantise the embeddings'
 * float values with 127/max|value| and scale activations with that
 * tensor's activation scale, Wemb_QuantMultA or decoder_Wemb_QuantMultA,
 * as the reference does (with or without a shortlist). NULL + message on
 * error (a missing scale names the tensor). */
fy_decoder *fy_decoder_bind(const fy_marian *m, int d, int dffn, int depth, int heads, int int8,
                            const fy_nn_embedding *emb, int vocab, fy_error *err);

/* The int8 output layer's weights from int8 embeddings e (count values):
 * exactly fy_i8_quantize of their float values (float)q·inv with *mult =
 * fy_i8_weight_mult of them, without making the floats; written to q
 * unless q is NULL. Returns 1 when they equal e's bytes (intgemm's
 * max|q| = 127: the output layer can read e's bytes in place), else 0. */
int fy_decoder_requantize_i8(const fy_nn_embedding *e, size_t count, int8_t *q, float *mult);

/* Bytes of int8 output-layer weights dec allocated: 0 when the layer reads
 * the embeddings in place (fy_decoder_requantize_i8 found them unchanged). */
size_t fy_decoder_output_bytes(const fy_decoder *dec);

/* Bytes of the copies of its step layers' weights that dec keeps for
 * one-row steps (fy_linear_prepare_one_row; 0 on paths without them). */
size_t fy_decoder_one_row_bytes(const fy_decoder *dec);

/* Frees dec; NULL is harmless. */
void fy_decoder_free(fy_decoder *dec);

/* Layer i's parts (0 <= i < depth), borrowed: for a backend that copies the
 * weights to a device. */
typedef struct fy_decoder_layer_view {
    const fy_linear *rnn_w;  /* SSRU candidate, no bias */
    const fy_linear *rnn_wf; /* forget gate */
    const fy_nn_norm *rnn_ln;
    const fy_nn_attn *ctx; /* cross-attention */
    const fy_nn_ffn *ffn;
} fy_decoder_layer_view;

void fy_decoder_layer_get(const fy_decoder *dec, int i, fy_decoder_layer_view *out);

/* The tied output layer ([vocab] outputs of d inputs), borrowed. */
const fy_linear *fy_decoder_output(const fy_decoder *dec);

/* Linear-layer scratch bytes for up to rows rows (the output layer
 * included), or for the cross-attention projection of rows source tokens. */
size_t fy_decoder_linear_scratch(const fy_decoder *dec, int rows);

/* Projects the encoder context ctx [ntok][d] (nsent sentences: sentence i
 * is rows off[i] .. off[i]+len[i]-1) into every layer's cross-attention
 * values [depth][ntok][d] and keys [depth][ntok·d], where each sentence's
 * keys are one block, transposed: element c of its key j at
 * keys[layer][off·d + c·len + j] (a step reads its sentence's keys as one
 * contiguous block). tmp: [ntok][d] floats of scratch. */
void fy_decoder_prepare(const fy_decoder *dec, const float *ctx, int ntok, const int *off,
                        const int *len, int nsent, float *keys, float *values, float *tmp,
                        void *lin_scratch);

/* One step: x [rows][d] holds the rows' input embeddings on entry and their
 * top hidden states on return; r->state is updated in place. */
void fy_decoder_step(const fy_decoder *dec, float *x, const fy_decoder_rows *r,
                     const fy_decoder_scratch *s);

/* logits[rows][ncols] = x·Wembᵀ + b over the target ids cols (sorted; NULL
 * means all vocab ids, ncols ignored). */
void fy_decoder_logits(const fy_decoder *dec, const float *x, int rows, const int32_t *cols,
                       int ncols, void *lin_scratch, float *logits);

/* fy_decoder_logits with row i's logits at logits + i·ld (ld >= the
 * number of columns). */
void fy_decoder_logits_ex(const fy_decoder *dec, const float *x, int rows, const int32_t *cols,
                          int ncols, void *lin_scratch, float *logits, int ld);

#endif
