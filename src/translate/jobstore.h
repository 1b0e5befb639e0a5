/* jobstore.h - where document jobs live (translate/jobs.h): each job's
 * state (a JSON text the store does not read), the uploaded file, the
 * translations done so far (checkpoints, by unit index), the translated
 * file, a cancel mark and a lease; on disk (one server, or several on one
 * host) or in Redis (replicas), behind one operations table.
 *
 *   disk   DIR/<id>/state.json   the state, replaced by rename
 *          DIR/<id>/source       the upload (the directory appears whole:
 *                                made as DIR/.new-<id>, renamed)
 *          DIR/<id>/units.jsonl  checkpoints, appended: one JSON line
 *                                {"i": unit, "t": text} each; a torn last
 *                                line (a crash mid-write) is ignored
 *          DIR/<id>/result       the translated file, replaced by rename
 *          DIR/<id>/cancel       present: cancel asked
 *          DIR/<id>/lock         flock()ed by the process running the job:
 *                                the kernel lets go when it dies
 *   Redis  fanyi:job:<id>         the state      fanyi:job:<id>:src     the upload
 *          fanyi:job:<id>:units   hash unit -> text   fanyi:job:<id>:result
 *          fanyi:job:<id>:cancel  fanyi:job:<id>:lease   owner, PX: expires
 *          fanyi:jobs             zset of every id (score: created, ms)
 *          fanyi:jobs:open        zset of the unfinished ones
 *          fanyi:jobs:bytes       hash id -> bytes it holds (the bound)
 *          every key of a job with EX ttl, renewed with its state
 *
 * Ids are 32 lower-case hex digits (the caller makes them); the store
 * refuses anything else. The size bound (max_bytes) covers the uploads,
 * checkpoints and results together: create refuses a job that does not fit
 * with room for a result of its size (FY_ESPACE), and a result that does
 * not fit is refused too. Functions return 0 or an FY_E* code with err
 * (FY_ENOTFOUND: no such job; FY_ESPACE: full; FY_EIO / FY_ENET: the disk
 * or Redis failed), err may be NULL (the code alone); they may be called
 * from any thread.
 */
#ifndef FY_TRANSLATE_JOBSTORE_H
#define FY_TRANSLATE_JOBSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "translate/cache_redis.h"
#include "util/error.h"

typedef struct fy_jobstore fy_jobstore;

/* A checkpoint's units as stored: called once per unit, in no set order. */
typedef void (*fy_jobstore_unit_fn)(void *user, size_t i, const char *text, size_t len);

typedef struct fy_jobstore_ops {
    /* A new job: its state and its upload data[0..len); lease_ms > 0: with
     * this process's lease taken before anyone can see the job (see lease).
     * FY_ESPACE when len twice over does not fit. */
    int (*create)(fy_jobstore *s, const char *id, const char *state, const char *data, size_t len,
                  int ttl_s, int lease_ms, fy_error *err);
    /* The state (malloc'd, NUL-terminated) into *state. */
    int (*get_state)(fy_jobstore *s, const char *id, char **state, fy_error *err);
    /* Replaces the state; open 0 once the job is over (it leaves the open
     * list). ttl_s: how long the job is kept from now (Redis; the disk store
     * leaves expiry to the caller). FY_ENOTFOUND when it was removed; 1,
     * nothing written, when an open state would replace an ended one (the
     * job ended elsewhere: a run that stalled past its lease must stop). */
    int (*put_state)(fy_jobstore *s, const char *id, const char *state, int open, int ttl_s,
                     fy_error *err);
    /* The upload (malloc'd) into *data, *len. */
    int (*get_source)(fy_jobstore *s, const char *id, char **data, size_t *len, fy_error *err);
    /* Checkpoints n units: indexes idx[k], texts[k][0..lens[k]). */
    int (*put_units)(fy_jobstore *s, const char *id, const size_t *idx, const char *const *texts,
                     const size_t *lens, size_t n, fy_error *err);
    /* Every checkpointed unit to fn. */
    int (*get_units)(fy_jobstore *s, const char *id, fy_jobstore_unit_fn fn, void *user,
                     fy_error *err);
    /* The translated file; FY_ESPACE when it does not fit. */
    int (*put_result)(fy_jobstore *s, const char *id, const char *data, size_t len, int ttl_s,
                      fy_error *err);
    int (*get_result)(fy_jobstore *s, const char *id, char **data, size_t *len, fy_error *err);
    /* Deletes everything of the job (done: harmless). */
    int (*remove)(fy_jobstore *s, const char *id, fy_error *err);
    /* The ids (malloc'd array of 33-byte strings) of every job, or of the
     * unfinished ones only (open; the disk store lists them all), oldest
     * first where the store knows. */
    int (*list)(fy_jobstore *s, int open, char (**ids)[33], size_t *n, fy_error *err);
    /* Marks the job to be cancelled / tells whether it is (1, 0). */
    int (*cancel)(fy_jobstore *s, const char *id, fy_error *err);
    int (*canceled)(fy_jobstore *s, const char *id, fy_error *err);
    /* Takes or renews this process's lease on the job for ms (the disk
     * store's lease lasts until unlease or death): 1 held, 0 another
     * holder has it, or an error. */
    int (*lease)(fy_jobstore *s, const char *id, int ms, fy_error *err);
    /* Lets the lease go (not held: harmless). */
    void (*unlease)(fy_jobstore *s, const char *id);
    /* Bytes held and jobs, as far as this process knows. */
    void (*usage)(fy_jobstore *s, uint64_t *bytes, size_t *jobs);
    void (*free)(fy_jobstore *s);
    const char *name; /* "disk", "redis" */
} fy_jobstore_ops;

struct fy_jobstore {
    const fy_jobstore_ops *ops;
};

/* The disk store in dir (made with its parents, mode 0700, when missing).
 * NULL with FY_EIO naming the directory and the reason. */
fy_jobstore *fy_jobstore_dir_open(const char *dir, uint64_t max_bytes, fy_error *err);

/* The Redis store at o's server (host, port, user, password, db; its
 * timeout is each exchange's for small ones, larger files get more). The
 * connection is made on first use and again after a failure; Redis being
 * down is FY_ENET per call. NULL with FY_ENOMEM. */
fy_jobstore *fy_jobstore_redis_open(const fy_redis_options *o, uint64_t max_bytes, fy_error *err);

/* Frees s; NULL harmless. */
void fy_jobstore_free(fy_jobstore *s);

/* Is id 32 lower-case hex digits? */
int fy_jobstore_id_ok(const char *id);

#endif
