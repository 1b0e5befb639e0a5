/* synth.h - synthetic Firefox-Translations-shaped models for tests.
 *
 * Writes, on any machine and without network, model files with exactly the
 * tensor names, shapes, types, embedded YAML and binary layout of Mozilla's
 * student models (see synth.c for the verified facts), filled with
 * deterministic pseudo-random weights, plus binary shortlists. Vocabulary
 * training (spm_train) is driven by cmd_model_synth.c; this module only needs
 * the vocabulary sizes.
 */
#ifndef FY_MODEL_SYNTH_H
#define FY_MODEL_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* What the version line of a synthetic model's model.yml holds, so that
 * a tool can tell a synthetic model from a real one (fanyi model verify
 * does not hold it against the catalogue's sizes and hashes). */
#define FY_SYNTH_MARK "fanyi-synthetic"

/* Output-layer activation scales of int8 models: none_QuantMultA (float32)
 * and Wemb_QuantMultA, or decoder_Wemb_QuantMultA with separate
 * vocabularies (intgemm8 [1, 1]). */
enum { FY_SYNTH_SCALE_NONE = 1, FY_SYNTH_SCALE_WEMB = 2 };

/* The distribution of weight matrices and embeddings (see synth.c):
 * uniform (Glorot-uniform, the default: a quarter of all int8 pairs can
 * saturate int16), or trained (near-Gaussian with the same variance and
 * rare outliers up to 8 standard deviations, as trained weights look:
 * very few int8 pairs can saturate). */
typedef enum { FY_SYNTH_WEIGHTS_UNIFORM, FY_SYNTH_WEIGHTS_TRAINED } fy_synth_weights;

typedef struct fy_synth_options {
    int dim_emb, dim_ffn, enc_depth, dec_depth, heads;
    int src_vocab_size, trg_vocab_size;
    int separate_vocab; /* encoder_Wemb/decoder_Wemb instead of a tied-all Wemb */
    int int8;           /* intgemm8 weights + *_QuantMultA activation scales */
    uint64_t seed;
    float emb_scale; /* multiplies the embedding table (logit gap), e.g. 20 */
    fy_synth_weights weights;
    /* int8 only: which output-layer activation scales the file holds
     * (FY_SYNTH_SCALE_* bits; 0 = what the real models hold:
     * fy_synth_default_scales) and factors on their analytic values (0 = 1),
     * so that tests can tell which one an engine uses. */
    unsigned out_scales;
    float none_scale_factor, wemb_scale_factor;
    const char *yaml; /* NULL: the real config; else this text is embedded (tests) */
} fy_synth_options;

/* The output-layer scales of real models (FY_SYNTH_SCALE_* bits). */
unsigned fy_synth_default_scales(int separate_vocab);

/* Fills o with a preset: the architectures "tiny" (d 256, ffn 1536, 6 + 2
 * layers), "base" (512, 2048, 6 + 2) and "base-memory" (384, 1536, 6 + 4)
 * with 32000-piece vocabulary sizes, float32 and a shared vocabulary unless
 * the caller changes them; or one of Mozilla's real models, whose
 * precision, vocabulary layout and sizes are part of the preset:
 * "firefox-zh-en" (base, int8, one 64000-piece vocabulary) and
 * "firefox-en-zh" (base-memory, int8, separate 32000 + 32000). emb_scale
 * 20, seed 1. Returns 0 or FY_EINVAL for an unknown name. */
int fy_synth_preset(const char *name, fy_synth_options *o, fy_error *err);

/* The file-name infix of the real model a preset reproduces ("zhen" for
 * firefox-zh-en, "enzh" for firefox-en-zh), NULL for the other presets. */
const char *fy_synth_preset_infix(const char *name);

/* "uniform" or "trained" into *out; returns 0 or FY_EINVAL. */
int fy_synth_weights_parse(const char *name, fy_synth_weights *out);

/* Fills v[count] with weights of the distribution for a tensor whose
 * uniform version is U(-half, half), drawn from stream (splitmix64 state):
 * the same numbers on every machine. */
void fy_synth_fill_weights(fy_synth_weights dist, float half, uint64_t *stream, float *v,
                           size_t count);

/* Writes the model to path atomically (path.tmp.PID, fsync, rename).
 * Returns 0, FY_EINVAL for bad options, FY_EIO, FY_ENOMEM. */
int fy_synth_write_model(const char *path, const fy_synth_options *o, fy_error *err);

/* How a synthetic shortlist draws each source id's target ids past the
 * `frequent` ones (ids below them are in every list, by the format):
 * uniform over the rest of the vocabulary (the default), or zipf, id
 * frequent + r - 1 with probability proportional to 1/r. A SentencePiece
 * vocabulary's ids run from frequent pieces to rare ones, and a trained
 * lexicon lists mostly frequent ones (IBM model 1 on the WMT zh-en test
 * sets with a 64000-piece vocabulary: half its entries below id 370, 90%
 * below 11,700; zipf lists of 50: below 525 and 24,100), so the lists of
 * a batch's sentences overlap as real ones do, where uniform lists hardly
 * overlap. */
typedef enum { FY_SYNTH_LEX_UNIFORM, FY_SYNTH_LEX_ZIPF } fy_synth_lex;

/* "uniform" or "zipf" into *out: 0, or FY_EINVAL for another name. */
int fy_synth_lex_parse(const char *name, fy_synth_lex *out);

/* Writes a binary shortlist (lex.*.s2t.bin) for src_vocab x trg_vocab:
 * header (frequent, best), per-source-id sorted lists of `best` distinct
 * pseudo-random target ids >= frequent drawn as dist says, correct
 * checksum; atomic. Returns 0, FY_EINVAL, FY_EIO, FY_ENOMEM. */
int fy_synth_write_shortlist(const char *path, int src_vocab, int trg_vocab, int frequent, int best,
                             fy_synth_lex dist, uint64_t seed, fy_error *err);

/* Writes a file atomically (temp + fsync + rename) from memory. */
int fy_write_file_atomic(const char *path, const void *data, size_t size, fy_error *err);

#endif
