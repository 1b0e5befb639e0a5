/* cache_key.h - what names a cached translation.
 *
 * A model's cache name is its direction and a hash of everything that
 * decides what it answers: the content (sha256) of the model file, of the
 * vocabularies and of the shortlist when it is used, the options that
 * change the output (max_length_factor; whether the shortlist is used), and
 * FY_CACHE_KEY_VERSION. Paths play no part: replicas that keep the same
 * model in different places share translations, and a model file replaced
 * in place is a different model. Batch sizes and the CPU's kernels do not
 * count: a translation never depends on them (translator.h).
 *
 * A Redis key is "fanyi:<version>:<cache name>:<first 128 bits of the
 * sentence's sha256, in hex>": bounded in size whatever the sentence, and
 * readable enough that `redis-cli --scan --pattern 'fanyi:3:zh-en:*'` finds
 * one direction's entries.
 */
#ifndef FY_TRANSLATE_CACHE_KEY_H
#define FY_TRANSLATE_CACHE_KEY_H

#include <stddef.h>

#include "model/discover.h"
#include "util/error.h"

/* Bump when the engine's output for the same model and input changes (a
 * numerics fix, a new clean-up between legs, ...): older entries then
 * stop matching instead of answering with the old output. 2: control
 * characters are dropped from the engine's text (output.c). 3: entries end
 * with the translation's confidence (alts.h). */
#define FY_CACHE_KEY_VERSION 3

/* "zh-en:" + 32 hex digits, and the NUL. */
#define FY_CACHE_NAME_MAX 96

/* Longest Redis key fy_cache_redis_key makes (with the NUL). */
#define FY_CACHE_REDIS_KEY_MAX (FY_CACHE_NAME_MAX + 48)

/* The cache name of the model made of files (the shortlist counts only when
 * shortlist_used), for direction ("zh-en", at most 40 bytes), with
 * max_length_factor. Reads every file once (about 0.05 s for a 60 MB
 * model). Writes at most FY_CACHE_NAME_MAX bytes into out. Returns 0, or
 * FY_ENOTFOUND / FY_EIO / FY_ENOMEM naming the file, FY_EINVAL for a
 * direction that is too long. */
int fy_cache_model_name(const char *direction, const fy_model_files *files, int shortlist_used,
                        float max_length_factor, char out[FY_CACHE_NAME_MAX], fy_error *err);

/* The Redis key of (model, text) into out. Returns its length, or -1 when
 * model is longer than FY_CACHE_NAME_MAX - 1 bytes or memory is short. */
int fy_cache_redis_key(const char *model, const char *text, char out[FY_CACHE_REDIS_KEY_MAX]);

#endif
