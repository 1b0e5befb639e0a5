/* cache.h - caches of sentence translations behind one operations table.
 *
 * The scheduler looks each sentence up before it queues it (one call for
 * all the sentences of a job at a leg of their route) and stores what the
 * engine translated (one call per batch): a hit skips the engine. A cache
 * is an object whose first member is its operations table, so a cache can
 * be the in-process LRU (fy_cache_lru_new), Redis (cache_redis.h), a fake
 * in a test, or tiers of them (fy_cache_tiers_new: memory -> Redis ->
 * engine).
 *
 * A key is (model, text): model names the model by its content and by every
 * option that changes its output (cache_key.h builds it), text is the
 * input of one leg, trimmed. Two models never share answers. The scheduler's
 * model carries the beam size: the name for greedy decoding, name@beamN
 * for beam N, whose values hold the alternatives too (translate/alts.h). A value is the
 * engine's whole translation of text, valid UTF-8 without NUL; callers
 * store nothing else (no errors, no partial results), and every tier bounds
 * the size of what it keeps (FY_CACHE_VALUE_MAX at most).
 *
 * Every operation may be called from any thread at any time.
 */
#ifndef FY_TRANSLATE_CACHE_H
#define FY_TRANSLATE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* The largest translation any tier stores or accepts back (bytes, without
 * the NUL): far above a sentence's translation (a request holds at most a
 * few thousand characters), small enough that one bad entry cannot cost
 * much memory or a slow round trip. */
#define FY_CACHE_VALUE_MAX (64 * 1024)

typedef struct fy_cache fy_cache;

typedef struct fy_cache_key {
    const char *model; /* the model's cache name (borrowed) */
    const char *text;  /* the leg's input (borrowed) */
} fy_cache_key;

/* Round-trip histogram buckets of a remote tier (upper bounds in seconds);
 * the last bucket is +Inf. */
#define FY_CACHE_RTT_BUCKETS 12
extern const double fy_cache_rtt_bounds[FY_CACHE_RTT_BUCKETS - 1];

/* The counters of one tier. Lookups count per key: a hit, a miss, or an
 * error (the tier could not answer: down, too slow, refusing, or its
 * circuit breaker open). */
typedef struct fy_cache_stats {
    const char *tier; /* "memory", "redis", ... (static) */
    uint64_t hits, misses, errors;
    uint64_t inserts, evictions; /* entries stored; entries evicted (memory) */
    size_t entries, bytes, budget;
    /* Remote tiers. */
    int remote;                                    /* 1 for a tier over the network */
    int up;                                        /* connected and answering */
    int breaker_open;                              /* not being asked at the moment */
    uint64_t breaker_opened;                       /* times the breaker opened */
    uint64_t writes, writes_dropped, write_errors; /* values sent; dropped (queue full,
                                                      tier down); refused by the server */
    uint64_t rtt[FY_CACHE_RTT_BUCKETS];            /* round trips by duration (not cumulative) */
    uint64_t rtt_count;
    double rtt_sum;       /* seconds */
    char last_error[128]; /* why the tier last failed ("" if never) */
} fy_cache_stats;

typedef struct fy_cache_ops {
    /* Looks up keys[0..n): values[i] (set to NULL by the caller) receives
     * a malloc'd copy of the translation on a hit. Gives up at deadline_ms
     * (fy_now_ms() time; 0: the tier's own timeout only). Returns the
     * number of hits, or a negative FY_E* code when the tier could not
     * answer (then every values[i] is NULL). Counts every key. */
    int (*get_many)(fy_cache *c, const fy_cache_key *keys, size_t n, char **values,
                    int64_t deadline_ms);
    /* Stores copies of values[i] for keys[i], best effort: a value over the
     * tier's size bound is not stored, a remote tier may drop what it
     * cannot send (counted). Must not wait for the network. */
    void (*put_many)(fy_cache *c, const fy_cache_key *keys, const char *const *values, size_t n);
    /* Writes the counters of each tier into out[0..cap) and returns how many
     * tiers there are (1 for a single cache). */
    size_t (*stats)(fy_cache *c, fy_cache_stats *out, size_t cap);
    /* Frees the cache (and the tiers it owns). */
    void (*free)(fy_cache *c);
} fy_cache_ops;

/* Every implementation starts with this. */
struct fy_cache {
    const fy_cache_ops *ops;
};

/* The operations, with c NULL meaning "no cache" (every key misses,
 * nothing is stored, no tiers). */
int fy_cache_get_many(fy_cache *c, const fy_cache_key *keys, size_t n, char **values,
                      int64_t deadline_ms);
void fy_cache_put_many(fy_cache *c, const fy_cache_key *keys, const char *const *values, size_t n);
size_t fy_cache_tier_stats(fy_cache *c, fy_cache_stats *out, size_t cap);
void fy_cache_free(fy_cache *c);

/* One key: the translation (malloc'd) or NULL; and one store. */
char *fy_cache_get(fy_cache *c, const char *model, const char *text);
void fy_cache_put(fy_cache *c, const char *model, const char *text, const char *translation);

/* The in-process LRU: at most budget_bytes, counting keys, values and each
 * entry's overhead; the least recently used entries go first; an entry
 * larger than the whole budget or a value over FY_CACHE_VALUE_MAX is not
 * stored. Budget 0: every lookup misses and nothing is stored. Tier name
 * "memory". NULL with FY_ENOMEM. */
fy_cache *fy_cache_lru_new(size_t budget_bytes, fy_error *err);

/* The same as fy_cache_lru_new (its name before there were tiers). */
fy_cache *fy_cache_new(size_t budget_bytes, fy_error *err);

/* Tiers asked in order: a lookup asks each tier for the keys the tiers
 * before it missed (or could not answer), and copies a later tier's hits
 * into the earlier tiers; a store goes to every tier. Takes ownership of
 * the n tiers (1 <= n <= FY_CACHE_TIERS_MAX), also on failure. NULL with
 * FY_EINVAL or FY_ENOMEM. */
#define FY_CACHE_TIERS_MAX 4
fy_cache *fy_cache_tiers_new(fy_cache *const *tiers, size_t n, fy_error *err);

#endif
