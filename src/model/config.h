/* config.h - architecture of a Marian transformer model.
 *
 * Read from the YAML embedded in the model (special:model.yml) with libyaml,
 * then cross-checked against the tensors actually present (dimensions,
 * depths, vocabulary sizes, tying), so the engine never relies on a
 * hard-coded architecture and an inconsistent model fails at load time.
 */
#ifndef FY_MODEL_CONFIG_H
#define FY_MODEL_CONFIG_H

#include "model/marian.h"

typedef struct fy_model_config { /* read from the embedded YAML (+ tensor names) */
    int dim_emb, dim_ffn, enc_depth, dec_depth, heads;
    int src_vocab_size, trg_vocab_size;
    int tied_embeddings_all;            /* one Wemb for source, target and output */
    int tied_embeddings;                /* target embedding tied to output layer */
    char enc_cell[16], dec_cell[16];    /* "transformer" (model type) / "ssru" (dec-cell) */
    char ffn_activation[16];            /* "relu" */
    char postprocess[8], preprocess[8]; /* transformer-postprocess "dan", -preprocess "" */
    int ffn_depth;
    int int8;                /* weights are intgemm8 (with *_QuantMultA scales) */
    int dec_dim_ffn;         /* transformer-decoder-dim-ffn (YAML 0 = dim_ffn) */
    int dec_ffn_depth;       /* transformer-decoder-ffn-depth (YAML 0 = ffn_depth) */
    int separate_embeddings; /* encoder_Wemb + decoder_Wemb (output tied to decoder_Wemb) */
    int output_bias;         /* decoder_ff_logit_out_b present */
} fy_model_config;

/* Reads m's embedded YAML and tensors into *out. Returns 0, FY_EFORMAT for
 * malformed YAML or YAML that disagrees with the tensors, FY_EUNSUPPORTED for
 * a valid model we cannot run (e.g. dec-cell other than ssru, non-empty
 * transformer-preprocess); the message names the model file and the key. */
int fy_model_config_read(const fy_marian *m, fy_model_config *out, fy_error *err);

/* Reads a one-element tensor (an activation scale such as
 * "encoder_l1_self_Wq_QuantMultA" or "none_QuantMultA") stored as float32, or
 * as intgemm8 (value = int8 * (1 / multiplier) in float, Marian's order; how
 * Wemb_QuantMultA is stored).
 * Returns 0, or FY_EFORMAT when missing, not a scalar or not a positive
 * finite number. */
int fy_model_read_scalar(const fy_marian *m, const char *name, float *out, fy_error *err);

#endif
