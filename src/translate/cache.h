/* cache.h - thread-safe LRU cache of sentence translations.
 *
 * The scheduler looks every sentence up here before it queues it: a hit
 * skips the engine. Entries are keyed by (model id, sentence) so two models
 * never share answers; the sentence is expected to be normalised already
 * (the scheduler trims it). The scheduler's model id carries the beam size:
 * the engine's name for greedy decoding, name@beamN for beam N (whose
 * values hold the alternatives too, translate/alts.h). Memory is bounded by
 * a byte budget counting keys, values and per-entry overhead; the least
 * recently used entries go first.
 */
#ifndef FY_TRANSLATE_CACHE_H
#define FY_TRANSLATE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct fy_cache fy_cache;

typedef struct fy_cache_stats {
    uint64_t hits, misses, inserts, evictions;
    size_t entries, bytes, budget;
} fy_cache_stats;

/* Creates a cache holding at most budget_bytes (0 disables caching: every
 * lookup misses and nothing is stored). NULL on allocation failure. */
fy_cache *fy_cache_new(size_t budget_bytes, fy_error *err);

/* Frees the cache and every entry; NULL is harmless. */
void fy_cache_free(fy_cache *c);

/* Looks up (model, sentence). On a hit returns a malloc'd copy of the
 * translation (the caller frees it) and marks the entry most recently used;
 * on a miss (or allocation failure) returns NULL. Counts hits and misses. */
char *fy_cache_get(fy_cache *c, const char *model, const char *sentence);

/* Stores a copy of translation for (model, sentence), replacing any older
 * value, evicting least recently used entries to stay within the budget.
 * An entry larger than the whole budget is not stored. */
void fy_cache_put(fy_cache *c, const char *model, const char *sentence, const char *translation);

/* Copies the counters into *out. */
void fy_cache_get_stats(fy_cache *c, fy_cache_stats *out);

#endif
