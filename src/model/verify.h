/* verify.h - checking and describing an installed model directory.
 *
 * fy_model_inspect loads every file of a model directory the way the engine
 * will (model + embedded config, vocabularies, shortlist) and cross-checks
 * them, so `fanyi model verify` and `fanyi model info` report exactly what
 * `translate`/`serve` would trip over. fy_model_verify adds the manifest's
 * sizes and sha256 digests for files it knows by name.
 */
#ifndef FY_MODEL_VERIFY_H
#define FY_MODEL_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "model/config.h"
#include "model/discover.h"
#include "model/manifest.h"
#include "util/error.h"
#include "util/lang.h"

typedef struct fy_model_info {
    fy_model_files files;   /* discovered paths (owned) */
    fy_model_config config; /* from the model's YAML + tensors */
    uint64_t model_bytes, shortlist_bytes, src_vocab_bytes, trg_vocab_bytes;
    size_t tensors;             /* tensors in the model file (model.yml included) */
    size_t int8_tensors;        /* intgemm8 / int8 matrices */
    size_t f32_tensors;         /* float32 tensors */
    size_t quant_scales;        /* *_QuantMultA activation scales ("alphas") */
    int shared_vocab;           /* one vocabulary file for source and target */
    int src_pieces, trg_pieces; /* SentencePiece vocabulary sizes */
    int has_shortlist;
    int sl_frequent, sl_best, sl_src_vocab, sl_max_target;
    char source[FY_LANG_MAX], target[FY_LANG_MAX]; /* from the file names, "" if unnamed */
} fy_model_info;

/* Loads dir with fy_bundle_open (the engine's own loader, with all its
 * checks: architecture, vocabulary sizes against the embeddings, shortlist
 * ids) and describes it. Returns 0 with *out filled (release with
 * fy_model_info_free), or the first problem's code with a one-line message
 * naming the file (FY_ENOTFOUND, FY_EINVAL, FY_EFORMAT, FY_EUNSUPPORTED,
 * FY_EHASH, FY_EIO, FY_ENOMEM); *out is then still safe to free. */
int fy_model_inspect(const char *dir, fy_model_info *out, fy_error *err);

/* Frees what *info owns and zeroes it; harmless on a zeroed struct. */
void fy_model_info_free(fy_model_info *info);

/* One line of a verify report: file (base name, or the directory) and
 * whether the check passed, with a short detail. */
typedef void (*fy_verify_fn)(void *ctx, const char *file, int ok, const char *detail);

/* Verifies dir: each present file's size and sha256 against manifest (may be
 * NULL) when it lists the file's name, files the matching manifest model lists
 * but dir lacks, then fy_model_inspect. Calls fn (may be NULL) per check.
 * Returns 0 when everything passed, else the first failure's code with its
 * one-line message in err. info (may be NULL) receives the inspection when it
 * succeeded (free with fy_model_info_free). */
int fy_model_verify(const char *dir, const fy_manifest *manifest, fy_verify_fn fn, void *ctx,
                    fy_model_info *info, fy_error *err);

/* Which manifest model dir holds: the one named like the directory
 * ("zh-Hant-en"), else the first that lists one of its file names; NULL if
 * none. */
const fy_manifest_model *fy_model_identify(const char *dir, const fy_manifest *manifest);

#endif
