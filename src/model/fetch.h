/* fetch.h - downloading and installing a model's files safely (libcurl).
 *
 * A model is built completely beside the installed one and then switched
 * to in one rename (src/model/store.h has the layout): every file is
 * downloaded into a partial file of a staging directory, checked against
 * the manifest's size and sha256 while it streams, fsync'd, and only a
 * complete, verified set of files becomes a version that the model
 * directory's link is pointed at. Readers (serve, translate, verify) see the
 * old model or the new one, never a mix; a fetch that fails or is killed at
 * any point leaves the old model as it was, and a plain rerun continues
 * where it stopped (partial downloads resume with an HTTP Range request,
 * after re-hashing what is already on disk).
 *
 * One fetch at a time works on a model directory (an flock); files already
 * installed with the right size and hash are reused (hard links), never
 * downloaded again; a file in the way that differs from the manifest is
 * never replaced unless the caller asks (force). Transfers are bounded: a
 * minimum rate over a window, requests per file, and the whole fetch's time.
 */
#ifndef FY_MODEL_FETCH_H
#define FY_MODEL_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "model/manifest.h"
#include "util/error.h"

typedef struct fy_fetch_progress {
    const char *name;    /* the file being downloaded */
    size_t index, count; /* which download this is (0-based) of how many */
    uint64_t done;       /* bytes of the file on disk so far (resumed part included) */
    uint64_t total;      /* the file's size */
    uint64_t received;   /* bytes received over the network for it in this run */
    double elapsed_s;    /* seconds since its download started in this run */
    int finished;        /* 1 on the last report for this file */
} fy_fetch_progress;

typedef struct fy_fetch_options {
    int force;              /* replace files even when present (good or not) */
    long connect_timeout_s; /* give up connecting after this long (default 20) */
    long rate_window_s;     /* end a request that receives fewer than */
    long min_bytes_per_s;   /*   min_bytes_per_s over rate_window_s (30 s, 1024 B/s) */
    int retries;            /* failed requests in a row without progress, per file (5) */
    int max_attempts;       /* requests per file in all (20) */
    long max_time_s;        /* the whole fetch, waiting for the lock included (4 h) */
    long retry_delay_ms;    /* pause before each resume (default 1000) */
    int no_wait;            /* another fetch holds the directory: fail at once, not wait */
    /* Optional callbacks (ctx passed through): progress during downloads,
     * and one-line notes ("already installed", "resuming at ..."). */
    void (*progress)(void *ctx, const fy_fetch_progress *p);
    void (*note)(void *ctx, const char *line);
    void *ctx;
    /* Test hooks (NULL/0 in normal use; tests/modelmgmt sets them through
     * FANYI_TEST_FETCH_* variables): raise SIGKILL when the fetch reaches the
     * stage named test_kill_at; fail the step named test_fail_at with EIO;
     * take test_free_bytes (when > 0) as the free space of the file system.
     * Stages: "downloaded" (a file is complete in the staging directory),
     * "staged" (all are), "commit" / "committed" (the staging directory
     * becomes a version), "switch" / "switched" (the model directory's link
     * is replaced). */
    const char *test_kill_at, *test_fail_at;
    unsigned long long test_free_bytes;
} fy_fetch_options;

typedef struct fy_fetch_result {
    size_t installed;  /* files of the new version not taken from the installed model */
    size_t skipped;    /* files already installed and good (reused) */
    uint64_t received; /* bytes received over the network */
    int refused;       /* 1 when a differing file was in the way and force was off */
} fy_fetch_result;

/* Fills *o with the defaults above. */
void fy_fetch_options_default(fy_fetch_options *o);

/* Downloads model's files and installs them as the model directory dir
 * (created if missing, with its parents). Returns 0 (installed, or already
 * installed and good) or a negative code with a one-line message naming the
 * file and the cause in err:
 *   FY_ENET      cannot reach the host ("cannot reach HOST — copy the files
 *                into DIR, or use --mirror URL"), an HTTP error status, or the
 *                connection kept failing
 *   FY_ETIMEOUT  the server stopped sending data or stayed under the minimum
 *                rate, or the fetch ran out of max_time_s or max_attempts
 *   FY_EHASH     size or sha256 mismatch (the bad data is deleted)
 *   FY_EIO       a disk error (no space, permissions, ...), or a symbolic
 *                link or other non-regular file where fetch writes
 *   FY_EINVAL    a file in the way differs and force is off (res->refused)
 *   FY_EBUSY     another fetch is installing into dir (with no_wait, or still
 *                when max_time_s ran out)
 *   FY_ENOMEM
 * Nothing changes where readers look unless every file is good. res (may be
 * NULL) receives counts. Not thread-safe (initialises libcurl). */
int fy_fetch_model(const fy_manifest_model *model, const char *dir, const fy_fetch_options *o,
                   fy_fetch_result *res, fy_error *err);

#endif
