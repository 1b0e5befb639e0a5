/* scheduler.h - dynamic batching of sentences from many requests.
 *
 * Every request (a "job") is a list of sentences. Sentences not found in
 * the cache go into ONE bounded queue shared by all jobs; N worker threads,
 * each with its own engine worker state, take batches of similar length
 * under a token budget, waiting a short window (a few ms) so that concurrent
 * requests share batches. The engine is batch-invariant, so a sentence's
 * translation does not depend on its neighbours in a batch.
 *
 * The scheduler is generic over the engine: it calls a translate_batch
 * function with per-worker state, so it can be tested with a fake engine.
 *
 * Threads: fy_scheduler_submit / fy_job_* may be called from any thread.
 * Callbacks run on worker threads (or in the submitting thread, before
 * submit returns, for cache hits) and must be quick and must not call back
 * into the scheduler except fy_job_result / fy_job_status.
 */
#ifndef FY_TRANSLATE_SCHEDULER_H
#define FY_TRANSLATE_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "translate/cache.h"
#include "util/error.h"

/* Translates n sentences as one batch with per-thread state worker; out[i]
 * receives a malloc'd translation. Returns 0 or a negative FY_E* code. */
typedef int (*fy_batch_fn)(void *ctx, void *worker, const char *const *src, size_t n, char **out,
                           fy_error *err);
/* Creates / frees one worker's state (called once per worker thread). */
typedef void *(*fy_worker_new_fn)(void *ctx, fy_error *err);
typedef void (*fy_worker_free_fn)(void *worker);
/* Token count of a sentence (for batching); NULL: bytes / 3 + 1. */
typedef long (*fy_count_fn)(void *ctx, const char *text, size_t len);

typedef struct fy_scheduler_options {
    int threads;             /* worker threads; <= 0: online CPUs */
    size_t queue_max;        /* most sentences waiting (default 1024) */
    int max_batch_tokens;    /* padded token budget of a batch (default 2048) */
    int max_batch_sentences; /* default 32 */
    int window_us;           /* how long a worker lets a batch fill (default 2000) */
    fy_batch_fn translate;   /* required */
    fy_worker_new_fn worker_new;
    fy_worker_free_fn worker_free;
    fy_count_fn count_tokens;
    void *ctx;         /* passed to the functions above; borrowed */
    fy_cache *cache;   /* optional; borrowed, must outlive the scheduler */
    const char *model; /* cache key prefix (copied); default "" */
} fy_scheduler_options;

/* Fills the defaults above (translate etc. NULL). */
void fy_scheduler_options_default(fy_scheduler_options *o);

typedef struct fy_scheduler fy_scheduler;
typedef struct fy_job fy_job;

/* Starts the workers (creating each worker's state). NULL on error. */
fy_scheduler *fy_scheduler_open(const fy_scheduler_options *o, fy_error *err);

/* Stops taking work, fails the jobs still queued with FY_ECANCELED, joins
 * the workers and frees everything. Jobs must have been released first or
 * be released afterwards (jobs outlive the scheduler safely). NULL harmless. */
void fy_scheduler_free(fy_scheduler *s);

typedef struct fy_job_callbacks {
    /* Sentence index is translated; called in index order, once each. */
    void (*on_sentence)(void *user, size_t index, const char *translation);
    /* The job finished: 0, or FY_ETIMEOUT, FY_ECANCELED, or the engine's
     * error code (message via fy_job_status). Called exactly once, unless the
     * job was cancelled with fy_job_cancel first. */
    void (*on_done)(void *user, int status);
    void *user;
} fy_job_callbacks;

/* Submits n sentences (copied; each is trimmed of surrounding whitespace
 * before the cache and the engine see it, an empty one translates to "").
 * deadline_ms: CLOCK_MONOTONIC milliseconds after which the job fails with
 * FY_ETIMEOUT (0: none). Returns the job (the caller owns one reference and
 * must fy_job_release it), or NULL with FY_EBUSY when the queue cannot take
 * the job's uncached sentences, FY_ECANCELED when shutting down, FY_ENOMEM.
 * Callbacks may run before this returns. cb is copied. */
fy_job *fy_scheduler_submit(fy_scheduler *s, const char *const *sentences, size_t n,
                            int64_t deadline_ms, const fy_job_callbacks *cb, fy_error *err);

/* Cancels: pending sentences are dropped; once this returns no callback of
 * the job runs any more. Harmless on a finished job. */
void fy_job_cancel(fy_job *j);

/* 1 when finished (any status). */
int fy_job_done(fy_job *j);

/* The status (0 while running or on success) and its message into err. */
int fy_job_status(fy_job *j, fy_error *err);

/* Translation of sentence i once delivered (borrowed until release), else NULL. */
const char *fy_job_result(fy_job *j, size_t i);

/* Drops the caller's reference (cancelling is separate); NULL harmless. */
void fy_job_release(fy_job *j);

/* Batch-size histogram buckets (upper bounds); the last is +Inf. */
#define FY_SCHED_HIST 9
extern const int fy_sched_hist_bounds[FY_SCHED_HIST - 1];

typedef struct fy_scheduler_stats {
    uint64_t jobs, rejected, timeouts, canceled, failed;
    uint64_t batches, batch_sentences, batch_tokens; /* engine work */
    uint64_t cache_sentences;                        /* answered by the cache */
    uint64_t batch_hist[FY_SCHED_HIST];              /* batches by size (not cumulative) */
    size_t queue_depth, queue_max, in_flight;
    int threads;
} fy_scheduler_stats;

void fy_scheduler_get_stats(fy_scheduler *s, fy_scheduler_stats *out);

/* Current CLOCK_MONOTONIC time in milliseconds (for deadlines). */
int64_t fy_now_ms(void);

#endif
