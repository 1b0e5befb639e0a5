/* discover.h - finding a model's files in a directory.
 *
 * A model directory holds model.*.bin, optionally lex.*.s2t.bin, and either
 * vocab.*.spm (shared vocabulary) or srcvocab.*.spm + trgvocab.*.spm. Each
 * failure (missing or ambiguous file) is one line naming the directory and
 * the pattern.
 */
#ifndef FY_MODEL_DISCOVER_H
#define FY_MODEL_DISCOVER_H

#include "util/error.h"

typedef struct fy_model_files {
    char *dir, *model, *shortlist /* NULL if none */, *src_vocab,
        *trg_vocab /* same path as src_vocab when shared */;
} fy_model_files;

/* Finds files in dir by pattern: model.*.bin, lex.*.s2t.bin (optional), vocab.*.spm or
 * srcvocab.*.spm + trgvocab.*.spm. Paths are malloc'd "dir/name" strings owned by *out
 * (free with fy_model_files_free). Returns 0, FY_ENOTFOUND (directory, model or vocab
 * missing), FY_EINVAL (ambiguous: several files match one pattern, or both vocab.*.spm
 * and srcvocab/trgvocab), FY_EIO, FY_ENOMEM. *out is zeroed on error. */
int fy_model_discover(const char *dir, fy_model_files *out, fy_error *err);

/* Frees the strings and zeroes *f; harmless on a zeroed struct or NULL. */
void fy_model_files_free(fy_model_files *f);

/* The directory to use: explicit (if non-NULL), else $FANYI_MODEL_DIR, else
 * ~/.local/share/fanyi/models/zh-en. Returns malloc'd string (NULL only when out of
 * memory); the caller frees it. */
char *fy_model_default_dir(const char *explicit_dir);

/* The directory of model directories, one per direction: explicit (if
 * non-NULL), else $FANYI_MODELS_DIR, else the parent of $FANYI_MODEL_DIR
 * (which names one model directory), else ~/.local/share/fanyi/models.
 * Malloc'd (NULL only when out of memory). */
char *fy_models_root(const char *explicit_root);

#endif
