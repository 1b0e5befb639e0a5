/* fetch.h - downloading a model's files safely (libcurl).
 *
 * Every file of a manifest model is downloaded into a temporary file inside
 * the target directory (".NAME.<sha256 prefix>.part"), checked against the
 * manifest's size and sha256 while it streams, fsync'd, and only when every
 * file is good are they renamed into place and the directory fsync'd. So an
 * interrupted or failed fetch never leaves a half model where the engine
 * looks; the partial files stay for the next run to resume with an HTTP
 * Range request (re-hashing what is already on disk first).
 *
 * Files already installed with the right size and hash are skipped; a file
 * in the way that differs from the manifest is never overwritten unless the
 * caller asks (force).
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
    long stall_timeout_s;   /* abort a transfer below stall_bytes_per_s this long (30) */
    long stall_bytes_per_s; /* (default 1) */
    int retries;            /* resumes after failures without progress, per file (5) */
    long retry_delay_ms;    /* pause before each resume (default 1000) */
    /* Optional callbacks (ctx passed through): progress during downloads,
     * and one-line notes ("already installed", "resuming at ..."). */
    void (*progress)(void *ctx, const fy_fetch_progress *p);
    void (*note)(void *ctx, const char *line);
    void *ctx;
} fy_fetch_options;

typedef struct fy_fetch_result {
    size_t installed;  /* files renamed into place */
    size_t skipped;    /* files already installed and good */
    uint64_t received; /* bytes received over the network */
    int refused;       /* 1 when a differing file was in the way and force was off */
} fy_fetch_result;

/* Fills *o with the defaults above. */
void fy_fetch_options_default(fy_fetch_options *o);

/* Downloads and installs model's files into dir (created if missing).
 * Returns 0 (all files installed or already good) or a negative code with a
 * one-line message naming the file and the cause in err:
 *   FY_ENET      cannot reach the host ("cannot reach HOST — copy the files
 *                into DIR, or use --mirror URL"), an HTTP error status, or the
 *                connection kept failing
 *   FY_ETIMEOUT  the server stopped sending data
 *   FY_EHASH     size or sha256 mismatch (the bad data is deleted)
 *   FY_EIO       a disk error (no space, permissions, ...)
 *   FY_EINVAL    a file in the way differs and force is off (res->refused)
 *   FY_EBUSY     another fetch is downloading the same file into dir
 *   FY_ENOMEM
 * Nothing is installed unless every file is good. res (may be NULL) receives
 * counts. Not thread-safe (initialises libcurl). */
int fy_fetch_model(const fy_manifest_model *model, const char *dir, const fy_fetch_options *o,
                   fy_fetch_result *res, fy_error *err);

/* The state of an installed file against its manifest entry. */
typedef enum { FY_FILE_MISSING, FY_FILE_OK, FY_FILE_WRONG_SIZE, FY_FILE_WRONG_HASH } fy_file_state;

/* Checks dir/f->name: size first, then sha256 only when the size is right.
 * Returns 0 and sets *state, or FY_EIO/FY_ENOMEM when it cannot be read. */
int fy_fetch_check_file(const fy_manifest_file *f, const char *dir, fy_file_state *state,
                        fy_error *err);

#endif
