/* bundle.h - one model directory, loaded and cross-checked as a whole.
 *
 * A bundle is everything on disk that one direction needs: the Marian
 * model (mapped), its architecture, the SentencePiece vocabularies and the
 * optional lexical shortlist. fy_bundle_open is the only loader: the
 * translator runs what it opens, and `fanyi model verify` / `model info`
 * report what it says, so a directory those accept is one the engine runs.
 *
 * Checks between files, beyond each loader's own: every float tensor and
 * quantisation multiplier is finite, every vocabulary piece is valid UTF-8,
 * the architecture is one
 * the engine computes (transformer encoder, SSRU decoder, post-norm "dan",
 * relu feed-forward of depth 2, output tied to the target embeddings), each
 * vocabulary has exactly as many pieces as its embedding has rows, both
 * have an EOS piece, the shortlist's ids fit the vocabularies, and the
 * direction the file names claim (model.enzh.* -> en->zh) is well formed.
 *
 * A bundle is read-only once open; any number of threads may read it.
 */
#ifndef FY_MODEL_BUNDLE_H
#define FY_MODEL_BUNDLE_H

#include <stdint.h>

#include "model/config.h"
#include "model/discover.h"
#include "model/marian.h"
#include "model/shortlist.h"
#include "text/spm.h"
#include "util/error.h"
#include "util/lang.h"

typedef struct fy_bundle {
    fy_model_files files;      /* the paths (owned) */
    fy_marian *model;          /* mapped model file */
    fy_model_config cfg;       /* architecture, from the YAML and the tensors */
    fy_spm *src_spm, *trg_spm; /* the same handle when the vocabulary is shared */
    int shared_vocab;
    fy_shortlist *shortlist;       /* NULL: none in the directory, or not wanted */
    int src_eos, trg_eos, trg_unk; /* trg_unk is -1 when the vocabulary has none */
    /* The direction the file names say ("enzh" -> "en", "zh"); "" when
     * they do not name one (a directory name is the caller's business). */
    char source[FY_LANG_MAX], target[FY_LANG_MAX];
    uint64_t model_bytes, shortlist_bytes, src_vocab_bytes, trg_vocab_bytes;
} fy_bundle;

/* Opens the model directory dir (files found by fy_model_discover) and
 * checks it as described above. use_shortlist 0 leaves a shortlist file
 * unopened. Returns a new bundle (free with fy_bundle_free), or NULL with a
 * one-line message naming the file and the problem: FY_ENOTFOUND,
 * FY_EINVAL (ambiguous files), FY_EFORMAT, FY_EUNSUPPORTED (valid, but an
 * architecture the engine does not compute), FY_EIO, FY_ENOMEM. */
fy_bundle *fy_bundle_open(const char *dir, int use_shortlist, fy_error *err);

/* Frees b and everything it owns; NULL is harmless. */
void fy_bundle_free(fy_bundle *b);

/* Bytes of the files the bundle maps or read (model, vocabularies,
 * shortlist): what loading it costs before any prepared weight. */
uint64_t fy_bundle_file_bytes(const fy_bundle *b);

#endif
