/* translator.h - the translation engine: one model, ready to translate.
 *
 * A fy_translator holds everything read-only that translating needs: the
 * mapped model, its architecture, the SentencePiece vocabularies, the
 * optional lexical shortlist, the float embeddings and the prepared linear
 * layers. Once open it is immutable, so any number of threads may translate
 * with it at once, each through its own fy_worker (the per-thread scratch
 * arena, sized when the worker is created and reused for every batch).
 *
 * Each sentence is translated exactly as the reference engine
 * (bergamot-translator 0.4.9 / Marian) translates it when given on its
 * own: SentencePiece pieces + EOS, split into segments of at most 128
 * tokens (127 pieces + EOS, the reference's max-length-break) whose
 * translations are concatenated; decoding that never emits <unk>; at most
 * ceil(max_length_factor × W) output tokens per segment, W being the widest
 * segment of the sentence (EOS included). Beam 1 is greedy decoding; a
 * larger beam is Marian's beam search with the reference's settings
 * (skip-cost: a hypothesis's path score is the sum of its tokens' logits,
 * EOS's included; normalize 1.0, word-penalty 0 by default), see
 * fy_translate_beam. A sentence's translation never depends on the other
 * sentences of the batch or on the CPU.
 */
#ifndef FY_TRANSLATE_TRANSLATOR_H
#define FY_TRANSLATE_TRANSLATOR_H

#include <stdatomic.h>
#include <stddef.h>

#include "model/config.h"
#include "util/error.h"

/* Source tokens per segment, EOS included (the reference's max-length-break). */
#define FY_SEGMENT_TOKENS 128

/* The largest beam a translator may be opened for. */
#define FY_BEAM_MAX 16

typedef struct fy_translator fy_translator; /* model + vocabs + shortlist + prepared weights */
typedef struct fy_worker fy_worker;         /* per-thread scratch (arena) */

typedef struct fy_translator_options {
    float max_length_factor; /* default 2.0 (output <= factor x source tokens incl. EOS) */
    int use_shortlist;       /* default 1: use lex.*.s2t.bin when the model has one */
    int max_batch_tokens;    /* scratch sizing: source tokens decoded together (>= 128) */
    int max_batch_sentences; /* scratch sizing: segments decoded together (>= 1) */
    int max_beam;            /* the largest beam a call may ask, 1 .. FY_BEAM_MAX; scratch
                                sizing: a worker holds max(max_batch_sentences, max_beam)
                                rows (hypotheses) */
    float length_norm;       /* beam search: a finished hypothesis of L steps scores */
    float word_penalty;      /* (path - word_penalty·L) / L^length_norm (Marian's
                                normalize and word-penalty; 1.0 and 0) */
} fy_translator_options;

/* Fills *o with the defaults (2.0, 1, 2048, 32, 8, 1.0, 0). */
void fy_translator_options_default(fy_translator_options *o);

/* Opens the model in model_dir with fy_bundle_open (files, architecture and
 * every check between them; model/bundle.h) and prepares everything. o may be
 * NULL for the defaults. Returns NULL with a one-line message naming the
 * directory or file and the problem (FY_ENOTFOUND, FY_EFORMAT,
 * FY_EUNSUPPORTED, FY_EINVAL for bad options, FY_ENOMEM). */
fy_translator *fy_translator_open(const char *model_dir, const fy_translator_options *o,
                                  fy_error *err);

/* Frees t; NULL is harmless. Every worker of t must be freed first. */
void fy_translator_free(fy_translator *t);

/* The options t was opened with (defaults filled in). */
const fy_translator_options *fy_translator_options_get(const fy_translator *t);

/* A worker for t on the CPU: allocates its whole scratch arena now (sized
 * from t's options). Use it from one thread at a time. NULL + message on
 * error. */
fy_worker *fy_worker_new(const fy_translator *t, fy_error *err);

/* A worker for t on dev (nn/backend.h; NULL: the CPU). The first worker on
 * a device places the model's network there (its weights uploaded, within
 * the device's budget); later ones share it. Its batches may be as large as
 * the device asks (fy_nn_dev.max_rows / max_tokens) where that exceeds t's
 * options. The output is the CPU's, bit for bit. NULL + message on error
 * (FY_ENOMEM when the device cannot take the model, FY_EDEVICE when it
 * failed, FY_EUNSUPPORTED for a model its backend cannot run). */
struct fy_nn_dev;
fy_worker *fy_worker_new_on(const fy_translator *t, struct fy_nn_dev *dev, fy_error *err);

/* Frees w; NULL is harmless. */
void fy_worker_free(fy_worker *w);

/* Gives w's scratch pages back to the system until its next translation
 * touches them again (each page then costs a fault). For a thread that
 * moves to another model's worker: only one of them need stay resident. */
void fy_worker_trim(fy_worker *w);

/* While *flag is non-zero, a translation running on w stops at its next
 * decoder step and fails with FY_ECANCELED (so a cancelled request or a
 * shutdown does not wait for a long batch). flag must outlive w; NULL: none. */
void fy_worker_set_abort(fy_worker *w, const atomic_int *flag);

/* Bytes of scratch one worker of t allocates (without allocating it). */
size_t fy_translator_worker_bytes(const fy_translator *t);

/* Translates n sentences (UTF-8, one sentence each, no newline) as one
 * batch. out[i] receives a malloc'd NUL-terminated translation the caller
 * frees (an empty or whitespace-only sentence gives ""); U+0000 characters
 * the model produces are left out (a C string cannot hold them). Different workers
 * may run at once. Returns 0, or a negative code with every out[i] NULL
 * (FY_ENOMEM, FY_EINVAL for a NULL sentence). */
int fy_translate_batch(const fy_translator *t, fy_worker *w, const char *const *src, size_t n,
                       char **out, fy_error *err);

/* What fy_translate_batch_ex reports about each sentence. */
typedef struct fy_translate_info {
    int src_tokens; /* SentencePiece pieces + EOS (0 for an empty sentence) */
    int segments;   /* pieces of at most FY_SEGMENT_TOKENS decoded separately */
    int out_tokens; /* target tokens produced, EOS excluded */
    float min_gap;  /* smallest best-minus-second-best logit over the decoding
                       steps (INFINITY when nothing was decoded): below float
                       noise (~1e-4) the reference may legitimately differ */
} fy_translate_info;

/* As fy_translate_batch; info (may be NULL) receives n entries. */
int fy_translate_batch_ex(const fy_translator *t, fy_worker *w, const char *const *src, size_t n,
                          char **out, fy_translate_info *info, fy_error *err);

/* One translation in a sentence's n-best list. */
typedef struct fy_hypothesis {
    char *text;  /* malloc'd, NUL-terminated; U+0000 left out, as in fy_translate_batch */
    float score; /* its normalised path score (see fy_translate_beam); higher is better */
    int tokens;  /* target tokens, EOS excluded */
} fy_hypothesis;

/* A sentence's n-best list: n hypotheses, best (highest score) first. */
typedef struct fy_nbest {
    fy_hypothesis *hyp;
    int n;
} fy_nbest;

/* Frees the list's texts and array and empties it; NULL harmless. */
void fy_nbest_clear(fy_nbest *nb);

/* As fy_translate_batch_ex with beam search of beam hypotheses per
 * sentence (1 .. t's max_beam; 1 is exactly fy_translate_batch_ex's greedy
 * decoding), as Marian's BeamSearch does it with the reference's settings:
 * every step extends each live hypothesis of a segment by every allowed
 * token (its shortlist, never <unk>) with path score + that token's logit,
 * and keeps the best `width` of them (ties: the lower hypothesis, then the
 * lower token id); width starts at beam and drops by one for each
 * hypothesis that ends on EOS, which leaves the beam finished; at the
 * length limit every live hypothesis finishes too. A finished hypothesis of
 * L steps (EOS included) scores (path - word_penalty·L) / L^length_norm;
 * the best score is the translation (ties: the one that finished first).
 * out[i] receives it. nbest (may be NULL) receives n lists: every finished
 * hypothesis of the sentence (beam of them, fewer only when the shortlist
 * had fewer tokens), best first, texts not deduplicated; a sentence of
 * several segments lists, as hypothesis j, its segments' j-th hypotheses
 * joined (a segment's last where it has fewer), scored by their mean. An
 * empty sentence lists one empty hypothesis. info->min_gap is, for beam >
 * 1, the smallest margin a decision of the search had: between the last
 * hypothesis kept and the best one dropped at a step, and between the two
 * best finished ones. Returns 0, or a negative code with every out[i] NULL
 * and every list empty (FY_EINVAL for a beam outside 1 .. max_beam, or a
 * NULL sentence; FY_ENOMEM). */
int fy_translate_beam(const fy_translator *t, fy_worker *w, const char *const *src, size_t n,
                      int beam, char **out, fy_nbest *nbest, fy_translate_info *info,
                      fy_error *err);

/* Source token count of text (SentencePiece pieces + EOS), for batching
 * and length limits; a negative code if text cannot be encoded. */
long fy_translator_count_tokens(const fy_translator *t, const char *text, size_t len);

/* The same in the target vocabulary (a translation's length as the model
 * would write it), for usage reports. */
long fy_translator_count_target_tokens(const fy_translator *t, const char *text, size_t len);

struct fy_engine;

/* Fills *e so that a scheduler translates with t (borrowed: t must outlive
 * every job routed through e, and fy_scheduler_forget(e) must run before
 * t is freed). name (borrowed) names the model in cache keys and stats. */
void fy_translator_engine(const fy_translator *t, const char *name, struct fy_engine *e);

/* The files, architecture and vocabularies t runs (borrowed). */
struct fy_bundle;
const struct fy_bundle *fy_translator_bundle(const fy_translator *t);

/* Bytes t holds beyond its mapped files: prepared weights and tables. */
size_t fy_translator_heap_bytes(const fy_translator *t);

#endif
