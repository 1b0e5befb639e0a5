/* scheduler.h - dynamic batching of sentences from many requests and models.
 *
 * Every request (a "job") is a list of sentences, and every sentence has a
 * route: the engines (models) it goes through in turn, one for a direct
 * direction, two for a pivot through English. Sentences not found in the
 * cache go into ONE bounded queue shared by all jobs and all engines; N
 * worker threads take batches of one engine, one beam size and similar
 * length under a token budget, waiting a short window (a few ms) so that
 * concurrent requests share batches. (One beam per batch: the engine then
 * runs one search shape, and a greedy batch stays exactly the greedy code;
 * requests of one server mostly share its default beam anyway.) A sentence
 * whose first leg is done goes back into the queue for its next leg, so
 * each leg is batched with the other sentences of that engine. One worker
 * pool serves every engine: each worker makes its own state for an engine
 * (the engine's scratch arena) on its first batch of that engine. The
 * engines are batch-invariant, so a sentence's translation does not depend
 * on its neighbours.
 *
 * Fairness: a batch forms around the oldest sentence of the job that has
 * had the fewest sentences taken so far (a stream's first sentences before
 * anything), so a one-sentence request does not wait behind the hundreds of
 * sentences of big requests queued before it, and big ones take turns;
 * batches fill up with the oldest other sentences, so none starves.
 * Priority: background sentences (fy_sentence_in.background: document
 * jobs) are a lower class. A worker takes them only when no interactive
 * sentence it may take is waiting, and a batch is of one class, so an
 * interactive sentence is taken before every one of them and never rides
 * in a batch made longer by them (it may still wait for a worker to end a
 * background batch: express workers take the small requests meanwhile);
 * among themselves the same fairness holds.
 * Background work fills what interactive work leaves of the workers (it
 * can starve while interactive work never lets up: by design). Express
 * workers (fy_scheduler_options.express) take only small jobs and a
 * stream's first sentences (never background ones), while a big job's
 * batch (a background batch counts as big) holds a regular worker:
 * the operating system shares the cores with them at once instead of after
 * that batch's 100-300 ms. With small jobs alone they stay idle.
 *
 * The scheduler is generic over the engine (function pointers), so it can
 * be tested with a fake one.
 *
 * The cache (cache.h) is asked once per job for all its sentences (and
 * again for the next leg of those whose first leg it answered), and once
 * per batch for the sentences going on to their next leg; a batch's
 * translations are stored in one call. A remote tier makes each of these
 * calls one round trip, bounded by its timeout and the job's deadline.
 *
 * Threads: fy_scheduler_submit / fy_job_* / fy_scheduler_forget may be
 * called from any thread. Callbacks run on worker threads (or in the
 * submitting thread, before submit returns, for cache hits) with the job's
 * lock held: they must be quick and must not call back into the scheduler
 * (fy_job_result, fy_job_gap and fy_job_status included: they take that
 * lock).
 */
#ifndef FY_TRANSLATE_SCHEDULER_H
#define FY_TRANSLATE_SCHEDULER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "translate/cache.h"
#include "util/error.h"

/* Translates n sentences as one batch with per-thread state worker; out[i]
 * receives a malloc'd translation; gap[i] (pre-set to INFINITY) may receive
 * the sentence's smallest top-1 minus top-2 logit gap. Returns 0 or a
 * negative FY_E* code. */
typedef int (*fy_batch_fn)(void *ctx, void *worker, const char *const *src, size_t n, char **out,
                           float *gap, fy_error *err);
/* The same with beam search of beam (> 1) hypotheses per sentence; alts[i]
 * (pre-set to NULL) may receive a malloc'd NULL-terminated array of
 * malloc'd strings: the sentence's next-best hypotheses after out[i], best
 * first, each different from out[i] and from the others. */
typedef int (*fy_beam_fn)(void *ctx, void *worker, const char *const *src, size_t n, int beam,
                          char **out, char ***alts, float *gap, fy_error *err);

/* How sure the engine was of a translation, as its search scored it
 * (translate/translator.h): score, the best hypothesis' path score divided
 * by its length (fy_hypothesis.score: with the reference's skip-cost, the
 * mean of the output layer's raw logits of its tokens, EOS included;
 * comparable only between translations by one model); margin, the smallest
 * best-minus-second-best difference of a decision (fy_translate_info.min_gap:
 * greedy decoding's top-1 minus top-2 logit at a step, which is
 * ln(p1 / p2) of the model's softmax whatever the logits' offset). NAN and
 * INFINITY when unknown. A translation through two engines has its last
 * leg's score and the smaller margin. */
typedef struct fy_confidence {
    float score;
    float margin;
} fy_confidence;

/* Greedy decoding (beam 1) and beam search in one, with each sentence's
 * confidence into conf[i] (pre-set to {NAN, INFINITY}); alts as fy_beam_fn
 * (only for beam > 1). */
typedef int (*fy_scored_fn)(void *ctx, void *worker, const char *const *src, size_t n, int beam,
                            char **out, char ***alts, fy_confidence *conf, fy_error *err);
/* Creates / frees one worker thread's state for an engine on device (the
 * fy_sched_device.dev of the worker's device; NULL: the default, the CPU).
 * A state that cannot be made on a device (FY_ENOMEM: the model does not
 * fit there, FY_EDEVICE, FY_EUNSUPPORTED) leaves that engine to the
 * other devices' workers. */
typedef void *(*fy_worker_new_fn)(void *ctx, void *device, fy_error *err);
typedef void (*fy_worker_free_fn)(void *worker);
/* Token count of a sentence (for batching); NULL: bytes / 3 + 1. */
typedef long (*fy_count_fn)(void *ctx, const char *text, size_t len);

/* One model the workers can translate with. Borrowed by the scheduler from
 * the first job routed through it until fy_scheduler_forget returns. */
typedef struct fy_engine {
    fy_batch_fn translate; /* required */
    fy_worker_new_fn worker_new;
    fy_worker_free_fn worker_free;
    fy_count_fn count_tokens;  /* tokens of a later leg's input (the first leg's come with it) */
    void *ctx;                 /* passed to the functions above */
    const char *name;          /* names the model in cache keys and stats, e.g. "zh-en" */
    fy_beam_fn translate_beam; /* optional: without it every beam is greedy, no alternatives */
    /* optional: the worker's translations stop early while *flag is set
     * (the scheduler sets it when no one waits for the batch any more) */
    void (*worker_abort)(void *worker, const atomic_int *flag);
    /* optional: gives a worker's scratch memory back; called when its thread
     * goes on to another engine's batch, so that a thread keeps one engine's
     * scratch resident however many engines it serves */
    void (*worker_trim)(void *worker);
    /* optional: translates every batch, greedy or beam, with the sentences'
     * confidence (translate and translate_beam are then not called) */
    fy_scored_fn translate_scored;
} fy_engine;

#define FY_ROUTE_MAX 2

/* Turns one leg's output into the next leg's input (e.g. the clean-up of
 * the pivot language): a malloc'd string, NULL when out of memory. */
typedef char *(*fy_between_fn)(const char *text, size_t len);

/* The engines a sentence goes through, in order (n = 1, or 2 for a pivot),
 * and what is done to a leg's output before the next leg (NULL: nothing). */
typedef struct fy_route {
    const fy_engine *legs[FY_ROUTE_MAX];
    int n;
    fy_between_fn between;
} fy_route;

/* One sentence of a job. */
typedef struct fy_sentence_in {
    const char *text;      /* copied */
    long tokens;           /* first leg's source tokens; <= 0: count with the engine */
    const fy_route *route; /* copied; its engines must stay valid (see fy_engine) */
    int beam;              /* beam size for every leg; <= 1: greedy */
    int wave;              /* 0: in turn. k > 0: urgent (a stream's first sentences): goes before
                              every sentence of wave 0 or of a later wave, without the batching
                              window, in a batch of its wave's sentences only, so a small wave
                              comes back in one small, quick batch */
    int background;        /* 1: background work (a document job): taken only when no
                              interactive sentence waits for the worker, in batches of
                              background sentences only, never by an express worker; 0:
                              interactive. Give it with wave 0. */
    const char *variant;   /* copied; NULL or "": none. Names what else decided the text (a
                              glossary's hash): cached under model#variant, so a sentence
                              translated for one variant never answers another. At most
                              FY_VARIANT_MAX - 1 bytes (longer ones are cut) */
} fy_sentence_in;

#define FY_VARIANT_MAX 24

/* A device the workers compute on (fy_scheduler_options.devices). */
typedef struct fy_sched_device {
    void *dev;               /* handed to the engines' worker_new; NULL: the default (the CPU) */
    const char *name;        /* "cpu", "vulkan:0": stats and logs (borrowed) */
    int threads;             /* workers on it; <= 0: the options' threads */
    int max_batch_sentences; /* its batches; <= 0: the options' */
    int max_batch_tokens;
} fy_sched_device;

#define FY_SCHED_DEVICES 17

typedef struct fy_scheduler_options {
    /* The devices, each with its own workers (data parallel over one
     * queue); none: one default device of `threads` workers. An engine
     * call that fails with FY_EDEVICE gives its batch back to the queue
     * for the other devices' workers, and that device takes no more work;
     * when no device is left, the queued jobs fail with FY_EDEVICE. */
    fy_sched_device devices[FY_SCHED_DEVICES];
    int ndevices;
    int threads;             /* worker threads; <= 0: online CPUs */
    int express;             /* more workers on the default device (when one is listed) that
                                take only small jobs (at most 4 sentences) and
                                a stream's first sentences, and only while a big job's batch
                                holds a regular worker, so that these do not wait for it to
                                end; they share the cores (default 0) */
    size_t queue_max;        /* most sentences waiting (default 1024) */
    int max_batch_tokens;    /* padded token budget of a batch (default 2048) */
    int max_batch_sentences; /* default 32 */
    int window_us;           /* how long a worker lets a batch fill (default 2000) */
    fy_cache *cache;         /* optional (any tiers); borrowed, must outlive the scheduler */
} fy_scheduler_options;

/* Fills the defaults above (no cache). */
void fy_scheduler_options_default(fy_scheduler_options *o);

typedef struct fy_scheduler fy_scheduler;
typedef struct fy_job fy_job;

/* Starts the workers. NULL on error. */
fy_scheduler *fy_scheduler_open(const fy_scheduler_options *o, fy_error *err);

/* Stops taking work, fails the jobs still queued with FY_ECANCELED, joins
 * the workers and frees everything, every engine's worker states included.
 * Jobs must have been released first or be released afterwards (jobs
 * outlive the scheduler safely). NULL harmless. */
void fy_scheduler_free(fy_scheduler *s);

/* Lets go of engine e before its owner frees it: the jobs with a sentence
 * still queued for e fail with FY_ECANCELED ("model unloaded"), then this
 * waits until no batch of e is running and frees every worker's state for
 * e; a worker moving sentences on to their next leg is waited for (it may
 * still read e's token count or name). Callers normally forget an engine
 * only when no job uses it. final (may be NULL) receives e's counters as
 * they ended. */
struct fy_engine_stats;
void fy_scheduler_forget(fy_scheduler *s, const fy_engine *e, struct fy_engine_stats *final);

typedef struct fy_job_callbacks {
    /* Sentence index is translated, with conf (see fy_confidence); called in
     * index order, once each. */
    void (*on_sentence)(void *user, size_t index, const char *translation, fy_confidence conf);
    /* The job finished: 0, or FY_ETIMEOUT, FY_ECANCELED, or the engine's
     * error code (message via fy_job_status). Called exactly once, unless the
     * job was cancelled with fy_job_cancel first. */
    void (*on_done)(void *user, int status);
    void *user;
} fy_job_callbacks;

/* Submits n sentences (texts copied; each is trimmed of surrounding white
 * space before the cache and the engine see it; an empty one translates to
 * "", one with an empty route to itself). The cache is asked for (model,
 * beam, variant, sentence): a beam above 1 keys as the engine's name +
 * "@beam" + N, and its entry holds the translation and its alternatives; a
 * variant adds "#" + variant; every entry ends with its confidence
 * (translate/alts.h). deadline_ms: fy_now_ms() time after
 * which the job fails with FY_ETIMEOUT (0: none). Returns the job (the
 * caller owns one reference and must fy_job_release it), or NULL with
 * FY_EBUSY when the queue cannot take the job's uncached sentences,
 * FY_ECANCELED when shutting down, FY_ENOMEM. The queue limit applies at
 * admission: a sentence going on to its next leg always gets back in.
 * Callbacks may run before this returns. cb is copied. Waits for the
 * cache's lookup (at most its timeout, and not past deadline_ms). */
fy_job *fy_scheduler_submit(fy_scheduler *s, const fy_sentence_in *in, size_t n,
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

/* Sentence i's alternatives once delivered: the last leg's next-best
 * hypotheses (beam > 1; see fy_beam_fn), *count of them (0 for beam 1, a
 * cache hit of beam 1, an empty sentence or an engine without beams), or
 * NULL. Borrowed until release. */
const char *const *fy_job_alternatives(fy_job *j, size_t i, size_t *count);

/* Sentence i's smallest logit gap over its legs (INFINITY when unknown:
 * empty, cached by an engine that did not report it, or the engine does
 * not report it). */
float fy_job_gap(fy_job *j, size_t i);

/* Sentence i's confidence once delivered (see fy_confidence; cached with
 * the translation), else {NAN, INFINITY}. */
fy_confidence fy_job_confidence(fy_job *j, size_t i);

/* The devices whose workers translated some of the job's sentences: bit i
 * for device i (fy_scheduler_device_name); 0 when the cache answered all. */
unsigned fy_job_devices(fy_job *j);

/* Drops the caller's reference (cancelling is separate); NULL harmless. */
void fy_job_release(fy_job *j);

/* Batch-size histogram buckets (upper bounds); the last is +Inf. */
#define FY_SCHED_HIST 9
extern const int fy_sched_hist_bounds[FY_SCHED_HIST - 1];

typedef struct fy_scheduler_stats {
    uint64_t jobs, rejected, timeouts, canceled, failed;
    uint64_t batches, batch_sentences, batch_tokens; /* engine work */
    uint64_t cache_sentences;                        /* sentences the cache answered whole */
    uint64_t batch_hist[FY_SCHED_HIST];              /* batches by size (not cumulative) */
    size_t queue_depth, queue_max, in_flight;
    int threads;
} fy_scheduler_stats;

void fy_scheduler_get_stats(fy_scheduler *s, fy_scheduler_stats *out);

/* What one engine has done since the scheduler first saw it. */
typedef struct fy_engine_stats {
    uint64_t sentences;  /* translated by the engine (each leg counts for its engine) */
    uint64_t batches;    /* engine calls */
    uint64_t cache_hits; /* legs answered by the cache */
    size_t queued, in_flight;
} fy_engine_stats;

/* Counters of engine e (zeros when the scheduler has not seen it). */
void fy_scheduler_engine_stats(fy_scheduler *s, const fy_engine *e, fy_engine_stats *out);

/* What the workers of one device have done. */
typedef struct fy_device_stats {
    const char *name; /* fy_sched_device.name */
    int threads;      /* its workers, express ones included */
    int failed;       /* 1 once an engine call failed with FY_EDEVICE there */
    uint64_t sentences, batches, given_back; /* given_back: sentences of failed batches */
    double busy_seconds;                     /* summed over its workers */
} fy_device_stats;

/* Device i's name (fy_sched_device.name; "cpu" for the default one), NULL
 * past the last. Valid while the scheduler lives. */
const char *fy_scheduler_device_name(fy_scheduler *s, int i);

/* Devices that have not failed (0: nothing can translate any more). */
int fy_scheduler_devices_alive(fy_scheduler *s);

/* The devices' counters: fills out[0 .. min(n, count)) and returns count. */
int fy_scheduler_device_stats(fy_scheduler *s, fy_device_stats *out, int n);

#endif
