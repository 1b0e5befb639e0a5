/* models.h - the registry of directions: which models exist, which are
 * loaded, and the routes requests take through them.
 *
 * A direction is a model directory: every subdirectory of a root named
 * SRC-TGT ("zh-en", "en-zh", "zh-Hant-en"; util/lang.h), or a directory
 * given by path, whose direction is its own name when that is SRC-TGT, else
 * the one its file names carry (model.enzh.* -> en->zh). Models load
 * lazily, on the first request that needs them, within a memory budget:
 * before and after a load, the least recently used models no request is
 * using are unloaded until the loaded ones fit. Concurrent first requests
 * for one model load it once; the others wait for it, so nobody gets an
 * error because a model is loading.
 *
 * A pair without a model of its own is served through English when both
 * legs exist (X->en, then en->Y): a pivot route of two engines, which the
 * scheduler batches leg by leg; the English between them gets the English
 * clean-up (fy_cleanup_english) a request into English would get. A
 * Traditional Chinese source without a zh-Hant model of its own is read by
 * the Simplified (zh) model.
 *
 * One worker pool (the scheduler) serves every model: each loaded model is
 * an fy_engine of it, and unloading one first makes the scheduler forget it.
 *
 * Thread-safe: any thread may acquire and release leases.
 */
#ifndef FY_TRANSLATE_MODELS_H
#define FY_TRANSLATE_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "translate/scheduler.h"
#include "translate/translator.h"
#include "util/error.h"
#include "util/lang.h"

typedef struct fy_registry fy_registry;

typedef struct fy_registry_options {
    const char *root;        /* directory of SRC-TGT model directories, or NULL */
    const char *const *dirs; /* single model directories (borrowed), ndirs of them */
    size_t ndirs;
    size_t memory_budget;       /* bytes loaded models may take (files, weights, worker
                                   scratch); 0: no limit */
    fy_translator_options topt; /* how models are opened (topt.max_beam: the largest beam a
                                   request may ask) */
    int beam;                   /* the beam of requests that do not say (default 1, at most
                                   topt.max_beam) */
    fy_scheduler *sched;        /* the pool that translates (borrowed, outlives the registry) */
    int threads;                /* its workers: each may hold scratch for each model */
} fy_registry_options;

/* Fills *o: no root, no dirs, no budget, default translator options, beam
 * 1, 1 thread. */
void fy_registry_options_default(fy_registry_options *o);

/* Finds the directions (nothing is loaded yet). A root subdirectory whose
 * name is not a direction, or holds no model files, is skipped; a
 * directory given in dirs that is not a model, two directories of one
 * direction, or no direction at all is an error (FY_ENOTFOUND, FY_EINVAL)
 * naming the directory. NULL with err on failure. */
fy_registry *fy_registry_open(const fy_registry_options *o, fy_error *err);

/* Unloads everything (forgetting the engines first) and frees r. Every
 * lease must have been released. NULL harmless. */
void fy_registry_free(fy_registry *r);

/* What a registry knows about one direction. */
typedef struct fy_direction_info {
    char source[FY_LANG_MAX], target[FY_LANG_MAX], name[FY_PAIR_MAX];
    const char *dir;   /* its directory (borrowed, lives as long as r) */
    const char *model; /* model file name (borrowed) */
    int loaded;        /* 1 while loaded (or loading) */
    size_t bytes;      /* memory it takes when loaded (measured at its last load; 0 before) */
    uint64_t loads, unloads;
    double last_load_s;   /* how long its last load took */
    fy_engine_stats work; /* what its engine did, over all its loads */
    size_t leases;        /* requests holding it now */
} fy_direction_info;

/* Number of directions (models), and the i-th's information. */
size_t fy_registry_count(const fy_registry *r);
int fy_registry_info(fy_registry *r, size_t i, fy_direction_info *out);

/* The beam of requests that do not say, and (if max_beam is non-NULL) the
 * largest one a request may ask. */
int fy_registry_beam(const fy_registry *r, int *max_beam);

/* Memory the loaded models take now, and the budget (0: none). */
size_t fy_registry_memory(fy_registry *r, size_t *budget);

/* How src->tgt can be served: 1 by its own model, 2 through English, 0 not
 * at all (src == tgt is 0 too: nothing to translate). */
int fy_registry_route_kind(const fy_registry *r, const char *src, const char *tgt);

/* Every language some route starts from (sources), ends in from src
 * (targets), or either (languages), sorted; returns how many (at most cap). */
size_t fy_registry_sources(const fy_registry *r, char (*out)[FY_LANG_MAX], size_t cap);
size_t fy_registry_languages(const fy_registry *r, char (*out)[FY_LANG_MAX], size_t cap);
size_t fy_registry_targets(const fy_registry *r, const char *src, char (*out)[FY_LANG_MAX],
                           size_t cap);

/* A route held for a request: its models are loaded and stay loaded until
 * the lease is released. */
typedef struct fy_lease fy_lease;

/* Loads (if needed) and pins the models for src->tgt. Returns the lease,
 * or NULL with FY_ENOTFOUND (no route: the message lists the pairs there
 * are), or the load's error (FY_EFORMAT, FY_EIO, FY_ENOMEM, ...) naming
 * the model directory. */
fy_lease *fy_registry_acquire(fy_registry *r, const char *src, const char *tgt, fy_error *err);

/* Loads every model now (within the budget: later ones may unload earlier
 * ones), so that a broken one fails at start. 0 or the first load error. */
int fy_registry_preload(fy_registry *r, fy_error *err);

/* Unpins; NULL harmless. The lease's jobs must be done or cancelled. */
void fy_lease_release(fy_lease *l);

/* The scheduler route (borrowed from the lease). */
const fy_route *fy_lease_route(const fy_lease *l);

/* The translator of the first leg (for token counts while splitting). */
const fy_translator *fy_lease_first(const fy_lease *l);

/* The translator of the last leg (for token counts of translations). */
const fy_translator *fy_lease_last(const fy_lease *l);

/* "zh-en", or "de-en-zh" for a pivot (borrowed from the lease). */
const char *fy_lease_name(const fy_lease *l);

/* Writes the direct pairs as "zh->en, en->zh" into out (for messages). */
void fy_registry_describe(const fy_registry *r, char *out, size_t cap);

#endif
