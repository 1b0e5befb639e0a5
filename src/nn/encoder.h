/* encoder.h - the transformer encoder of a Marian model (internal to the
 * engine: src/translate/translator.c is its only user).
 *
 * Input: the source sentences of a batch packed one after another without
 * padding (sentence s occupies rows off[s] .. off[s]+len[s]-1), already
 * embedded (see fy_nn_embed). Output, in place: the encoder context, one row
 * per source token. Each layer is self-attention then feed-forward, both
 * post-norm; see attention.h.
 */
#ifndef FY_NN_ENCODER_H
#define FY_NN_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#include "model/marian.h"
#include "nn/attention.h"
#include "util/error.h"

typedef struct fy_encoder fy_encoder;

/* Rows processed at a time by the feed-forward blocks (bounds the hidden
 * buffer to FY_NN_FFN_BLOCK x dffn floats). */
#define FY_NN_FFN_BLOCK 64

/* Caller-provided buffers for fy_encoder_forward, sized for at most
 * max_rows packed tokens and sentences of at most max_len tokens. */
typedef struct fy_encoder_scratch {
    float *q, *k, *v, *ctx; /* [max_rows][d] each */
    float *kt;              /* [max_rows·d]: each sentence's keys transposed, [d][len] */
    float *hidden;          /* [FY_NN_FFN_BLOCK][dffn] */
    float *out;             /* [FY_NN_FFN_BLOCK][d] */
    float *scores;          /* [max_rows·heads]: a row per sentence and head */
    void *lin;              /* fy_encoder_linear_scratch(e, max_rows) bytes, 64-aligned */
} fy_encoder_scratch;

/* Binds encoder_l1 .. encoder_l<depth> (self-attention and feed-forward of
 * width d, hidden dffn, heads heads). NULL with a message naming the model
 * file and tensor on error. */
fy_encoder *fy_encoder_bind(const fy_marian *m, int d, int dffn, int depth, int heads,
                            fy_error *err);

/* Frees e; NULL is harmless. */
void fy_encoder_free(fy_encoder *e);

/* Layer i's blocks (0 <= i < depth), borrowed: for a backend that copies
 * the weights to a device. */
const fy_nn_attn *fy_encoder_self(const fy_encoder *e, int i);
const fy_nn_ffn *fy_encoder_ffn(const fy_encoder *e, int i);

/* Linear-layer scratch bytes for batches of up to rows packed tokens. */
size_t fy_encoder_linear_scratch(const fy_encoder *e, int rows);

/* Runs every layer over x [rows][d] in place. off/len: nsent sentences
 * covering rows 0 .. rows-1. Never allocates. Its products, attention
 * heads and layer-norm rows are shared with the calling thread's team
 * (fy_par_attached), if it has one: the same bits. */
void fy_encoder_forward(const fy_encoder *e, float *x, int rows, const int *off, const int *len,
                        int nsent, const fy_encoder_scratch *s);

/* Marian's embedding input: x[r] = table[ids[r]]·scale + pos[r] for r < rows
 * (table [vocab][d]; ids == NULL means the zero embedding, so x[r] = pos[r]).
 * pos: rows rows of the sinusoidal table, one per row. */
void fy_nn_embed(float *x, const float *table, const int32_t *ids, int rows, int d, float scale,
                 const float *pos, int pos_stride);

#endif
