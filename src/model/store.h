/* store.h - where `fanyi model fetch` installs a model: versions and one atomic switch.
 *
 * Internal to src/model (fetch.c is its user). The model directory DIR that
 * readers open (MODELS/zh-en, or --dir DIR) is a symbolic link into a store
 * of versions beside it, in DIR's parent:
 *
 *   PARENT/BASE -> .fanyi-versions/BASE/ID.N    relative link, replaced by rename(2)
 *   PARENT/.fanyi-versions/BASE/lock            flock'd by the fetch working on BASE
 *   PARENT/.fanyi-versions/BASE/ID.N/           an installed version, never written again
 *   PARENT/.fanyi-versions/BASE/ID.staging/     the version being built (partial downloads)
 *   PARENT/.fanyi-versions/BASE/retired.N/      files someone put into a replaced model
 *                                               directory (kept, never removed)
 *
 * ID is VERSION-HASH12: the manifest's version and a digest of its file list
 * (fy_store_id), so a staging directory belongs to one manifest model and a
 * rerun continues it. A version is built completely in its staging
 * directory, renamed to ID.N, and then the link is replaced in one rename:
 * readers see the old version or the new one. A DIR that is a plain
 * directory (copied by hand, or installed by an older fanyi) is exchanged
 * for the link with renameat2(RENAME_EXCHANGE).
 *
 * Every path inside the store is opened relative to a directory descriptor
 * with O_NOFOLLOW: a symbolic link planted in the store is refused, never
 * followed. Only DIR itself may be a link the user made (zh-en -> /data/zh-en):
 * fetch then installs where it points.
 */
#ifndef FY_MODEL_STORE_H
#define FY_MODEL_STORE_H

#include <stddef.h>

#include "model/fetch.h"
#include "model/manifest.h"
#include "util/error.h"

#define FY_STORE_DIR_NAME ".fanyi-versions"

typedef enum {
    FY_STORE_NONE, /* DIR does not exist (or is fetch's link to a missing version) */
    FY_STORE_LINK, /* DIR is fetch's link to PARENT/.fanyi-versions/BASE/<active> */
    FY_STORE_PLAIN /* DIR is a plain directory */
} fy_store_kind;

typedef struct fy_store {
    char *dir;     /* PARENT/BASE, after following the user's links (messages) */
    char *vdir;    /* PARENT/.fanyi-versions/BASE (messages) */
    char *base;    /* BASE */
    int parent_fd; /* PARENT */
    int root_fd;   /* PARENT/.fanyi-versions */
    int base_fd;   /* PARENT/.fanyi-versions/BASE */
    int lock_fd;   /* its lock file, flock'd while the store is open */
    fy_store_kind kind;
    char *active;  /* FY_STORE_LINK: the version DIR points to (a name in base_fd) */
    int active_fd; /* the installed model's directory, -1 when there is none */
    const fy_fetch_options *o;
    const fy_manifest_model *model;
    int denied;                 /* the store could not be created or locked: permissions */
    int read_only;              /* so it is not open: only active_fd (through DIR) is */
    char why[FY_ERROR_MSG_MAX]; /* read_only: the message for any change */
} fy_store;

/* The ID of model's files (see above) into id (cap bytes). Returns 0 or
 * FY_ENOMEM. */
int fy_store_id(const fy_manifest_model *model, char *id, size_t cap);

/* Opens the store of the model directory dir for model, creating DIR's parents
 * and the store as needed, and takes its lock: when another fetch holds it,
 * waits (with a note naming its pid) until o->max_time_s runs out, or fails
 * at once with FY_EBUSY when o->no_wait. Then removes what a fetch killed
 * while switching left behind. *s is always initialised (close it with
 * fy_store_close, also on error). Returns 0, FY_EBUSY (no_wait, or the wait
 * ran out), FY_EIO (cannot create, a link or other non-directory planted in
 * the store, DIR not a directory), FY_ENOMEM. When nothing may change (DIR is a mount point,
 * or the store cannot be made for want of permission: a read-only models
 * root), returns 0 with s->read_only set: the installed model may be
 * checked through active_fd; s->why says why nothing else can be done. */
int fy_store_open(fy_store *s, const char *dir, const fy_manifest_model *model,
                  const fy_fetch_options *o, double deadline, fy_error *err);

/* The staging directory of id: its descriptor into *fd, created when create
 * (else *fd is -1 when there is none). Returns 0, FY_EIO (also when it is a
 * link or not a directory). */
int fy_store_staging(fy_store *s, const char *id, int create, int *fd, fy_error *err);

/* Removes the staging directory of id if it holds nothing (a failed fetch
 * that kept no partial download leaves no trace). */
void fy_store_drop_staging(fy_store *s, const char *id);

/* The newest complete version of id other than the active one (a fetch was
 * killed after building it, before switching): its name (malloc'd) and
 * descriptor, or NULL and -1. */
char *fy_store_candidate(fy_store *s, const char *id, int *fd);

/* Turns the staging directory of id into the version id.N (a fresh N) and
 * syncs the store. *version receives its name (malloc'd). Returns 0, FY_EIO,
 * FY_ENOMEM. */
int fy_store_commit(fy_store *s, const char *id, char **version, fy_error *err);

/* Points DIR at version in one rename (or exchange with a plain DIR) and
 * syncs PARENT; a plain DIR that was swapped out is retired. Returns 0,
 * FY_EIO (nothing changed), FY_ENOMEM. */
int fy_store_switch(fy_store *s, const char *version, fy_error *err);

/* Removes every staging directory and version but the active one; model
 * files are deleted, anything else found in a version is moved to
 * retired.N with a note. Needs the active version to be good. */
void fy_store_cleanup(fy_store *s);

/* Releases the lock and closes the store; a store that holds nothing but its
 * lock is removed. A zeroed or failed-to-open store is harmless. */
void fy_store_close(fy_store *s);

/* For the fetch code: a note through o->note, and the test hooks of
 * fy_fetch_options (test_kill_at: SIGKILL at stage; test_fail_at: returns 1
 * with errno EIO, for the caller to fail that step). */
void fy_store_note(const fy_fetch_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int fy_store_fault(const fy_fetch_options *o, const char *stage);

#endif
